/* harness.h: the names of the protocol between geak-eval and its Python
 * harness, generated from share/harness/protocol.tsv by
 * share/harness/protogen.awk: edit the table, not this file.
 * geak-harness(7) says what each means. */
#ifndef GEAK_HARNESS_H
#define GEAK_HARNESS_H

/* Operations (op). */
#define GEAK_OP_START             "start"
#define GEAK_OP_STATIC            "static"
#define GEAK_OP_CALIBRATE         "calibrate"
#define GEAK_OP_REGENERATE        "regenerate"
#define GEAK_OP_RUN               "run"
#define GEAK_OP_JUDGE             "judge"
#define GEAK_OP_QUIT              "quit"

/* Keys of a request. */
#define GEAK_REQ_OP               "op"
#define GEAK_REQ_SANDBOX          "sandbox"
#define GEAK_REQ_DIR              "dir"
#define GEAK_REQ_NONCE            "nonce"
#define GEAK_REQ_TIMEOUT          "timeout"
#define GEAK_REQ_COMPILE          "compile_timeout"
#define GEAK_REQ_HANDSHAKE        "handshake"
#define GEAK_REQ_MEMORY           "memory"
#define GEAK_REQ_RUN_BUDGET       "run_budget"
#define GEAK_REQ_PERF             "perf"
#define GEAK_REQ_PLAN             "plan"
#define GEAK_REQ_PROFILE          "profile"
#define GEAK_REQ_CAND             "cand"
#define GEAK_REQ_CAND_NONCE       "cand_nonce"
#define GEAK_REQ_PART             "part"

/* Values of part. */
#define GEAK_PART_RUN             "run"
#define GEAK_PART_TIMED           "timed"

/* Keys of a plan. */
#define GEAK_PLAN_RUNS            "runs"
#define GEAK_PLAN_POISON          "poison"
#define GEAK_PLAN_ONE_CALL        "one_call"
#define GEAK_PLAN_EXPECT          "expect"
#define GEAK_PLAN_PROBE_INPUTS    "probe_inputs"
#define GEAK_PLAN_FORCE           "force"
#define GEAK_PLAN_KEEP_GOING      "keep_going"
#define GEAK_PLAN_PERTURB         "perturb"
#define GEAK_PLAN_ORDER           "order"
#define GEAK_PLAN_AUTOTUNE        "autotune"
#define GEAK_PLAN_PINS            "pins"
#define GEAK_PLAN_PERF            "perf"
#define GEAK_PLAN_CHECKS          "checks"
#define GEAK_PLAN_MORE            "more"
#define GEAK_PLAN_SKIP            "skip"
#define GEAK_PLAN_GUARD_POISON    "guard_poison"
#define GEAK_PLAN_TIMING          "timing"
#define GEAK_PLAN_REPS            "reps"
#define GEAK_PLAN_WARMUP          "warmup"
#define GEAK_PLAN_REFERENCE       "reference"
#define GEAK_PLAN_KERNEL_PROFILE  "kernel_profile"
#define GEAK_PLAN_CASE            "case"
#define GEAK_PLAN_COUNTERS        "counters"
#define GEAK_PLAN_NCU_PATH        "path"
#define GEAK_PLAN_NCU_TIMEOUT     "ncu_timeout"
#define GEAK_PLAN_NCU_MESSAGE     "message"

/* Keys of a response. */
#define GEAK_RESP_STATUS          "status"
#define GEAK_RESP_CODE            "code"
#define GEAK_RESP_SIGNAL          "signal"
#define GEAK_RESP_WALL            "wall"
#define GEAK_RESP_PHASE           "phase"
#define GEAK_RESP_LANDLOCK        "landlock"
#define GEAK_RESP_LIMIT           "limit"
#define GEAK_RESP_JOB_SANDBOX     "sandbox"
#define GEAK_RESP_ERROR           "error"

/* Values of status. */
#define GEAK_ENDED_EXIT           "exit"
#define GEAK_ENDED_SIGNAL         "signal"
#define GEAK_ENDED_TIMEOUT        "timeout"
#define GEAK_ENDED_ABORTED        "aborted"
#define GEAK_ENDED_BAD_REQUEST    "bad_request"

/* Values of phase. */
#define GEAK_INPHASE_COMPILE      "compile"
#define GEAK_INPHASE_RUN          "run"

/* Values of limit. */
#define GEAK_LIMIT_MEMORY         "memory"

/* Keys of a response's sandbox. */
#define GEAK_LAYER_PIDNS          "pidns"
#define GEAK_LAYER_MOUNTNS        "mountns"
#define GEAK_LAYER_UID            "uid"
#define GEAK_LAYER_CGROUP         "cgroup"
#define GEAK_LAYER_MEMORY         "memory"
#define GEAK_LAYER_PROCS          "procs"

/* Messages of a job on its way, and geak-eval's answer. */
#define GEAK_MSG_READY            "ready"
#define GEAK_MSG_GO               "go"
#define GEAK_MSG_TIMED            "timed"

/* Keys of the greeting. */
#define GEAK_HELLO_HARNESS        "harness"
#define GEAK_HELLO_VERSIONS       "versions"
#define GEAK_HELLO_DEVICE         "device"
#define GEAK_HELLO_BUILD          "build"
#define GEAK_HELLO_CPU            "cpu"
#define GEAK_HELLO_FINGERPRINT    "fingerprint"

/* Keys of the greeting's versions. */
#define GEAK_VERSIONS_TORCH       "torch"

/* Keys of the greeting's device. */
#define GEAK_DEVICE_NAME          "name"
#define GEAK_DEVICE_ERROR         "error"

/* Keys of the greeting's build. */
#define GEAK_BUILD_CUDA           "cuda"
#define GEAK_BUILD_HIP            "hip"

/* Keys of the sandbox settings (start's sandbox). */
#define GEAK_BOX_UID              "uid"
#define GEAK_BOX_GID              "gid"
#define GEAK_BOX_CGROUP           "cgroup"
#define GEAK_BOX_CGROUP_HOST      "cgroup_host"
#define GEAK_BOX_MEMORY_CGROUP    "memory_cgroup"
#define GEAK_BOX_PIDS_CGROUP      "pids_cgroup"
#define GEAK_BOX_MEMORY           "memory"
#define GEAK_BOX_PROCS            "procs"
#define GEAK_BOX_HIDE             "hide"
#define GEAK_BOX_RO               "ro"

/* Files in a job's directory. */
#define GEAK_FILE_JOB             "job.json"
#define GEAK_FILE_STATIC          "static.json"
#define GEAK_FILE_PROFILE         "profile.json"
#define GEAK_FILE_PROFILE_PT      "profile.pt"
#define GEAK_FILE_MASKS           "masks.pt"
#define GEAK_FILE_SPEC            "spec.json"
#define GEAK_FILE_REGEN           "regen.json"
#define GEAK_FILE_RESULT          "result.json"
#define GEAK_FILE_OUTPUTS_PT      "outputs.pt"
#define GEAK_FILE_TIMING          "timing.json"
#define GEAK_FILE_TIMED_PT        "timed.pt"
#define GEAK_FILE_VERDICT         "verdict.json"
#define GEAK_FILE_STDOUT          "stdout.txt"
#define GEAK_FILE_STDERR          "stderr.txt"
#define GEAK_FILE_OOM             "oom"

/* Keys of job.json. */
#define GEAK_JOB_CODE             "code"
#define GEAK_JOB_SUITE            "suite"
#define GEAK_JOB_NAME             "name"
#define GEAK_JOB_TEST             "test"
#define GEAK_JOB_CAND_TEST        "cand_test"
#define GEAK_JOB_SEEDS            "seeds"
#define GEAK_JOB_CPU              "cpu"
#define GEAK_JOB_REFERENCE        "reference"
#define GEAK_JOB_PERF             "perf"
#define GEAK_JOB_ENTRY            "entry"
#define GEAK_JOB_PERF_CASES       "perf_cases"
#define GEAK_JOB_ALLOW_TORCH_OPS  "allow_torch_ops"
#define GEAK_JOB_TOLERANCE        "tolerance"
#define GEAK_JOB_HARNESS          "harness"
#define GEAK_JOB_VERSIONS         "versions"
#define GEAK_JOB_DEVICE           "device"
#define GEAK_JOB_PERF_CHECKED     "perf_checked"

/* Keys of static.json. */
#define GEAK_STATIC_FINDINGS      "findings"

/* Keys of a finding. */
#define GEAK_FINDING_RULE         "rule"
#define GEAK_FINDING_LINE         "line"
#define GEAK_FINDING_TEXT         "text"
#define GEAK_FINDING_STRICT       "strict"

/* Key of every result file. */
#define GEAK_NONCE                "nonce"

/* Keys of profile.json that geak-eval reads. */
#define GEAK_PROF_OK              "ok"
#define GEAK_PROF_KIND            "kind"
#define GEAK_PROF_ERROR           "error"
#define GEAK_PROF_POISON          "poison"
#define GEAK_PROF_ONE_CALL        "one_call"
#define GEAK_PROF_CASES           "cases"
#define GEAK_PROF_PERF_ERROR      "perf_error"
#define GEAK_PROF_CANDIDATE_PLAN  "candidate_plan"
#define GEAK_PROF_GPU_MIB         "gpu_mib"
#define GEAK_PROF_TOLERANCE       "tolerance"
#define GEAK_PROF_CANON_SUMS      "canon_sums"
#define GEAK_PROF_STEPS           "steps"
#define GEAK_PROF_SUITE           "suite"
#define GEAK_PROF_SEEDS           "seeds"
#define GEAK_PROF_TUNINGS         "tunings"

/* Keys of each process's entry in profile.json's steps. */
#define GEAK_STEP_WALL            "wall"
#define GEAK_STEP_RUNS            "runs"

/* Keys of a performance case (profile.json, timing.json) that geak-eval reads. */
#define GEAK_CASE_KEY             "key"
#define GEAK_CASE_OK              "ok"
#define GEAK_CASE_COUNTS          "counts"
#define GEAK_CASE_GBPS            "gbps"
#define GEAK_CASE_TFLOPS          "tflops"
#define GEAK_CASE_DTYPE           "dtype"
#define GEAK_CASE_BYTES           "bytes"
#define GEAK_CASE_MS              "ms"
#define GEAK_CASE_MS_REF          "ms_ref"
#define GEAK_CASE_REF_CHOICES     "ref_choices"

/* Keys of result.json that geak-eval reads. */
#define GEAK_RESULT_SPENT         "spent"

/* Keys of result.json's and timing.json's spent that geak-eval reads. */
#define GEAK_SPENT_TESTS          "tests"
#define GEAK_SPENT_PERF_CHECKS    "perf_checks"
#define GEAK_SPENT_PREPARE        "prepare"
#define GEAK_SPENT_ALONE          "alone"
#define GEAK_SPENT_TUNING         "tuning"
#define GEAK_SPENT_TIMED          "timed"
#define GEAK_SPENT_PROFILE        "profile"

/* Keys of timing.json that geak-eval reads. */
#define GEAK_TIMING_CASES         "cases"
#define GEAK_TIMING_CASES_TOTAL   "cases_total"
#define GEAK_TIMING_KERNEL_PROFILE "kernel_profile"

/* Keys of verdict.json. */
#define GEAK_VERDICT_CALL         "call"
#define GEAK_VERDICT_EXEC         "exec"
#define GEAK_VERDICT_STAGE        "stage"
#define GEAK_VERDICT_REASON       "reason"
#define GEAK_VERDICT_MESSAGE      "message"
#define GEAK_VERDICT_TRACEBACK    "traceback"
#define GEAK_VERDICT_FLAGS        "flags"
#define GEAK_VERDICT_NOTES        "notes"
#define GEAK_VERDICT_RUNS         "runs"

/* Keys of oom. */
#define GEAK_OOM_NEED_MIB         "need_mib"

/* Environment variables. */
#define GEAK_ENV_EVAL_CPU         "GEAK_EVAL_CPU"
#define GEAK_ENV_TRITON_CACHE     "GEAK_TRITON_CACHE"
#define GEAK_ENV_REF_TRITON_CACHE "GEAK_REF_TRITON_CACHE"
#define GEAK_ENV_PYPROFILE        "GEAK_PYPROFILE"

#endif
