/* harness.h: the names of the protocol between geak-eval and its Python
 * harness (share/harness), as geak-harness(7) specifies it.  Requests go
 * to the worker as JSON lines; each job works in a directory of its own
 * and leaves its results there as files. */
#ifndef GEAK_HARNESS_H
#define GEAK_HARNESS_H

/* Operations ("op"). */
#define GEAK_OP_STATIC    "static"     /* job.json's code read, static.json out */
#define GEAK_OP_CALIBRATE "calibrate"  /* the reference known: profile.json, profile.pt */
#define GEAK_OP_REGENERATE "regenerate" /* an imported profile's outputs: regen.json, profile.pt */
#define GEAK_OP_RUN       "run"        /* code run by a plan: result.json, outputs.pt, timing */
#define GEAK_OP_JUDGE     "judge"      /* a run judged against a profile: verdict.json */
#define GEAK_OP_QUIT      "quit"

/* Keys of every request. */
#define GEAK_REQ_OP        "op"
#define GEAK_REQ_DIR       "dir"              /* the job's directory (absolute) */
#define GEAK_REQ_NONCE     "nonce"            /* written into the job's result */
#define GEAK_REQ_TIMEOUT   "timeout"          /* seconds after the first call returned */
#define GEAK_REQ_COMPILE   "compile_timeout"  /* seconds until it did */
#define GEAK_REQ_HANDSHAKE "handshake"        /* the job says ready, waits for go */
#define GEAK_REQ_MEMORY    "memory"           /* bytes the job may use (its task's limit) */
/* calibrate */
#define GEAK_REQ_BUDGET    "run_budget"       /* seconds each of its runs may take */
#define GEAK_REQ_PERF      "perf"             /* calibrate the performance cases too */
/* run */
#define GEAK_REQ_PLAN      "plan"             /* see the plan keys below */
/* judge */
#define GEAK_REQ_PROFILE   "profile"          /* the profile's directory */
#define GEAK_REQ_CAND      "cand"             /* the run's directory */
#define GEAK_REQ_CANDNONCE "cand_nonce"       /* the run's nonce */
#define GEAK_REQ_PART      "part"             /* "run" or "timed" */

/* Keys of a plan. */
#define GEAK_PLAN_RUNS     "runs"       /* seeds, one run each */
#define GEAK_PLAN_POISON   "poison"     /* poisoned memory (default true) */
#define GEAK_PLAN_ONECALL  "one_call"   /* each run in a process of its own */
#define GEAK_PLAN_EXPECT   "expect"     /* call index -> arguments the reference changes */
#define GEAK_PLAN_PERFCHK  "perf"       /* {checks, more, skip}: the performance checks */
#define GEAK_PLAN_TIMING   "timing"     /* {reps, skip, pins}: the timing, on go */
#define GEAK_PLAN_REPS     "reps"
#define GEAK_PLAN_SKIP     "skip"
#define GEAK_PLAN_PINS     "pins"       /* choices to take: {case: [[kernel, key, config]]} */
#define GEAK_PLAN_KPROFILE "kernel_profile" /* {case}: profiled after its timing */

/* Messages of a job on its way, and geak-eval's answer. */
#define GEAK_MSG_READY     "ready"
#define GEAK_MSG_GO        "go"
#define GEAK_MSG_TIMED     "timed"      /* done with the GPU; the answer follows */

/* Files in a job's directory. */
#define GEAK_FILE_JOB      "job.json"      /* the task and the code, from geak-eval */
#define GEAK_FILE_STATIC   "static.json"
#define GEAK_FILE_PROFILE  "profile.json"
#define GEAK_FILE_MASKS    "masks.pt"      /* a profile's masks alone */
#define GEAK_FILE_SPEC     "spec.json"     /* the spec a profile was calibrated from */
#define GEAK_FILE_REGEN    "regen.json"
#define GEAK_FILE_RESULT   "result.json"
#define GEAK_FILE_TIMING   "timing.json"
#define GEAK_FILE_VERDICT  "verdict.json"
#define GEAK_FILE_STDOUT   "stdout.txt"
#define GEAK_FILE_STDERR   "stderr.txt"
#define GEAK_FILE_OOM      "oom"           /* left by a job that ran out of GPU memory */

#endif
