"""The names of the protocol between geak-eval and this harness,
generated from share/harness/protocol.tsv by share/harness/protogen.awk:
edit the table, not this file.  geak-harness(7) says what each means."""

# Operations (op).
OP_START = "start"
OP_STATIC = "static"
OP_CALIBRATE = "calibrate"
OP_REGENERATE = "regenerate"
OP_RUN = "run"
OP_JUDGE = "judge"
OP_QUIT = "quit"

# Keys of a request.
REQ_OP = "op"
REQ_SANDBOX = "sandbox"
REQ_DIR = "dir"
REQ_NONCE = "nonce"
REQ_TIMEOUT = "timeout"
REQ_COMPILE = "compile_timeout"
REQ_HANDSHAKE = "handshake"
REQ_MEMORY = "memory"
REQ_RUN_BUDGET = "run_budget"
REQ_PERF = "perf"
REQ_PLAN = "plan"
REQ_PROFILE = "profile"
REQ_CAND = "cand"
REQ_CAND_NONCE = "cand_nonce"
REQ_PART = "part"

# Values of part.
PART_RUN = "run"
PART_TIMED = "timed"

# Keys of a plan.
PLAN_RUNS = "runs"
PLAN_POISON = "poison"
PLAN_ONE_CALL = "one_call"
PLAN_EXPECT = "expect"
PLAN_PROBE_INPUTS = "probe_inputs"
PLAN_FORCE = "force"
PLAN_KEEP_GOING = "keep_going"
PLAN_PERTURB = "perturb"
PLAN_ORDER = "order"
PLAN_AUTOTUNE = "autotune"
PLAN_PINS = "pins"
PLAN_PERF = "perf"
PLAN_CHECKS = "checks"
PLAN_MORE = "more"
PLAN_SKIP = "skip"
PLAN_GUARD_POISON = "guard_poison"
PLAN_TIMING = "timing"
PLAN_REPS = "reps"
PLAN_WARMUP = "warmup"
PLAN_REFERENCE = "reference"
PLAN_KERNEL_PROFILE = "kernel_profile"
PLAN_CASE = "case"
PLAN_COUNTERS = "counters"
PLAN_NCU_PATH = "path"
PLAN_NCU_TIMEOUT = "ncu_timeout"
PLAN_NCU_MESSAGE = "message"

# Keys of a response.
RESP_STATUS = "status"
RESP_CODE = "code"
RESP_SIGNAL = "signal"
RESP_WALL = "wall"
RESP_PHASE = "phase"
RESP_LANDLOCK = "landlock"
RESP_LIMIT = "limit"
RESP_JOB_SANDBOX = "sandbox"
RESP_ERROR = "error"

# Values of status.
ENDED_EXIT = "exit"
ENDED_SIGNAL = "signal"
ENDED_TIMEOUT = "timeout"
ENDED_ABORTED = "aborted"
ENDED_BAD_REQUEST = "bad_request"

# Values of phase.
INPHASE_COMPILE = "compile"
INPHASE_RUN = "run"

# Values of limit.
LIMIT_MEMORY = "memory"

# Keys of a response's sandbox.
LAYER_PIDNS = "pidns"
LAYER_MOUNTNS = "mountns"
LAYER_UID = "uid"
LAYER_CGROUP = "cgroup"
LAYER_MEMORY = "memory"
LAYER_PROCS = "procs"

# Messages of a job on its way, and geak-eval's answer.
MSG_READY = "ready"
MSG_GO = "go"
MSG_TIMED = "timed"

# Keys of the greeting.
HELLO_HARNESS = "harness"
HELLO_VERSIONS = "versions"
HELLO_DEVICE = "device"
HELLO_BUILD = "build"
HELLO_CPU = "cpu"
HELLO_FINGERPRINT = "fingerprint"

# Keys of the greeting's versions.
VERSIONS_TORCH = "torch"

# Keys of the greeting's device.
DEVICE_NAME = "name"
DEVICE_ERROR = "error"

# Keys of the greeting's build.
BUILD_CUDA = "cuda"
BUILD_HIP = "hip"

# Keys of the sandbox settings (start's sandbox).
BOX_UID = "uid"
BOX_GID = "gid"
BOX_CGROUP = "cgroup"
BOX_CGROUP_HOST = "cgroup_host"
BOX_MEMORY_CGROUP = "memory_cgroup"
BOX_PIDS_CGROUP = "pids_cgroup"
BOX_MEMORY = "memory"
BOX_PROCS = "procs"
BOX_HIDE = "hide"
BOX_RO = "ro"

# Files in a job's directory.
FILE_JOB = "job.json"
FILE_STATIC = "static.json"
FILE_PROFILE = "profile.json"
FILE_PROFILE_PT = "profile.pt"
FILE_MASKS = "masks.pt"
FILE_SPEC = "spec.json"
FILE_REGEN = "regen.json"
FILE_RESULT = "result.json"
FILE_OUTPUTS_PT = "outputs.pt"
FILE_TIMING = "timing.json"
FILE_TIMED_PT = "timed.pt"
FILE_VERDICT = "verdict.json"
FILE_STDOUT = "stdout.txt"
FILE_STDERR = "stderr.txt"
FILE_OOM = "oom"

# Keys of job.json.
JOB_CODE = "code"
JOB_SUITE = "suite"
JOB_NAME = "name"
JOB_TEST = "test"
JOB_CAND_TEST = "cand_test"
JOB_SEEDS = "seeds"
JOB_CPU = "cpu"
JOB_REFERENCE = "reference"
JOB_PERF = "perf"
JOB_ENTRY = "entry"
JOB_PERF_CASES = "perf_cases"
JOB_ALLOW_TORCH_OPS = "allow_torch_ops"
JOB_TOLERANCE = "tolerance"
JOB_HARNESS = "harness"
JOB_VERSIONS = "versions"
JOB_DEVICE = "device"
JOB_PERF_CHECKED = "perf_checked"

# Keys of static.json.
STATIC_FINDINGS = "findings"

# Keys of a finding.
FINDING_RULE = "rule"
FINDING_LINE = "line"
FINDING_TEXT = "text"
FINDING_STRICT = "strict"

# Key of every result file.
NONCE = "nonce"

# Keys of profile.json that geak-eval reads.
PROF_OK = "ok"
PROF_KIND = "kind"
PROF_ERROR = "error"
PROF_POISON = "poison"
PROF_ONE_CALL = "one_call"
PROF_CASES = "cases"
PROF_PERF_ERROR = "perf_error"
PROF_CANDIDATE_PLAN = "candidate_plan"
PROF_GPU_MIB = "gpu_mib"
PROF_TOLERANCE = "tolerance"
PROF_CANON_SUMS = "canon_sums"
PROF_STEPS = "steps"
PROF_SUITE = "suite"
PROF_SEEDS = "seeds"
PROF_TUNINGS = "tunings"

# Keys of each process's entry in profile.json's steps.
STEP_WALL = "wall"
STEP_RUNS = "runs"

# Keys of a performance case (profile.json, timing.json) that geak-eval reads.
CASE_KEY = "key"
CASE_OK = "ok"
CASE_COUNTS = "counts"
CASE_GBPS = "gbps"
CASE_TFLOPS = "tflops"
CASE_DTYPE = "dtype"
CASE_BYTES = "bytes"
CASE_MS = "ms"
CASE_MS_REF = "ms_ref"
CASE_REF_CHOICES = "ref_choices"

# Keys of result.json that geak-eval reads.
RESULT_SPENT = "spent"

# Keys of result.json's and timing.json's spent that geak-eval reads.
SPENT_TESTS = "tests"
SPENT_PERF_CHECKS = "perf_checks"
SPENT_PREPARE = "prepare"
SPENT_ALONE = "alone"
SPENT_TUNING = "tuning"
SPENT_TIMED = "timed"
SPENT_PROFILE = "profile"

# Keys of timing.json that geak-eval reads.
TIMING_CASES = "cases"
TIMING_CASES_TOTAL = "cases_total"
TIMING_KERNEL_PROFILE = "kernel_profile"

# Keys of verdict.json.
VERDICT_CALL = "call"
VERDICT_EXEC = "exec"
VERDICT_STAGE = "stage"
VERDICT_REASON = "reason"
VERDICT_MESSAGE = "message"
VERDICT_TRACEBACK = "traceback"
VERDICT_FLAGS = "flags"
VERDICT_NOTES = "notes"
VERDICT_RUNS = "runs"

# Keys of oom.
OOM_NEED_MIB = "need_mib"

# Environment variables.
ENV_EVAL_CPU = "GEAK_EVAL_CPU"
ENV_TRITON_CACHE = "GEAK_TRITON_CACHE"
ENV_REF_TRITON_CACHE = "GEAK_REF_TRITON_CACHE"
ENV_PYPROFILE = "GEAK_PYPROFILE"


class ProtocolError(Exception):
    """A message or file that breaks the protocol."""


def need(obj, name, where):
    """obj[name], which the protocol says is there: a ProtocolError
    naming the key and where it is missing otherwise."""
    if not isinstance(obj, dict) or name not in obj:
        raise ProtocolError(f"{where} has no {name!r}")
    return obj[name]
