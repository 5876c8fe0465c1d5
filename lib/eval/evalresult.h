/* evalresult.h: one candidate's evaluation as geak-eval builds it, and
 * its "eval" object (geak-record(5)), made when the record goes out. */
#ifndef GEAK_EVALRESULT_H
#define GEAK_EVALRESULT_H

#include <jansson.h>

enum geak_stage { GEAK_STAGE_STATIC, GEAK_STAGE_CALL, GEAK_STAGE_EXEC, GEAK_STAGE_PERF,
	GEAK_STAGE_DONE };

/* Integrity findings: a flagged candidate never counts as correct. */
enum geak_flag { GEAK_FLAG_EXCESSIVE_SPEEDUP, GEAK_FLAG_ABOVE_ROOFLINE,
	GEAK_FLAG_PRECISION_DOWNGRADE, GEAK_FLAG_SECRETS_IN_ENV, GEAK_FLAG_UNCONFIRMED_SPEEDUP,
	GEAK_NFLAGS };

/* Facts about the evaluation that say nothing against the candidate. */
enum geak_note { GEAK_NOTE_UNSTABLE_REFERENCE, GEAK_NOTE_WITHIN_SPREAD, GEAK_NOTE_NO_LANDLOCK,
	GEAK_NOTE_PERF_FAILED, GEAK_NOTE_REFERENCE_PERF_FAILED, GEAK_NOTE_OOM_RETRY,
	GEAK_NOTE_ROOFLINE_UNRELIABLE, GEAK_NOTE_NO_POISON, GEAK_NOTE_ONE_CALL,
	GEAK_NOTE_ORIGINAL_TEST, GEAK_NOTE_PERF_SKIPPED, GEAK_NOTE_NO_PIDNS,
	GEAK_NOTE_NO_PRIVATE_ROOT, GEAK_NNOTES };

/* Where the seconds went (eval.phases). */
enum geak_phase { GEAK_PHASE_STATIC, GEAK_PHASE_REFERENCE, GEAK_PHASE_CALL, GEAK_PHASE_TESTS,
	GEAK_PHASE_PERF_CHECKS, GEAK_PHASE_PREPARE, GEAK_PHASE_JUDGE, GEAK_PHASE_PERF,
	GEAK_PHASE_PERF_ALONE, GEAK_PHASE_PERF_TUNING, GEAK_PHASE_PERF_TIMED, GEAK_PHASE_PERF_PROFILE,
	GEAK_PHASE_LOCK_WAIT, GEAK_NPHASES };

struct geak_case {
	char *key;            /* the performance case */
	double ms, ms_ref;    /* medians; ms_ref < 0 where the reference has none */
	double gbps, tflops;  /* achieved at ms, from the case's counts; 0: none */
	json_t *roofline;     /* against the device's roofs (roofline.h), or NULL */
};

struct geak_eval {
	char code_sha[65];
	int call, exec, cached;
	enum geak_stage stage;
	const char *reason;          /* a name of geak_reasons, or NULL */
	char *message, *traceback;
	unsigned flags, notes;       /* bits of enum geak_flag, geak_note */
	char **static_notes;         /* "static:RULE" notes, NULL-terminated */
	json_t *static_findings, *runs, *stdout_tail, *stderr_tail;
	struct geak_case *cases;
	size_t ncases;
	long cases_total;            /* the task's performance cases; 0: unknown */
	double speedup;              /* 0: none */
	int netns, landlock_worker, landlock_job, sandbox_known;
	json_t *sandbox_more;        /* further layers for eval.sandbox, or NULL */
	char *device, *harness;
	json_t *peaks;               /* the device's, where a case used them, or NULL */
	json_t *profile;             /* --profile's breakdown, or NULL */
	json_t *calibration;         /* the reference's calibration steps, where this
	                                evaluation calibrated it, or NULL */
	double seconds, phases[GEAK_NPHASES];
	char refused[256];           /* a file of the candidate's job not read: why */
};

void geak_eval_init(struct geak_eval *ev, const char *code_sha, const char *device,
	const char *harness);
void geak_eval_free(struct geak_eval *ev);
/* A verdict reached: stage, reason (one of the record's reasons; an
 * unknown one is "harness"), message (copied, may be NULL). */
void geak_eval_fail(struct geak_eval *ev, enum geak_stage stage, const char *reason,
	const char *message);
void geak_eval_flag(struct geak_eval *ev, enum geak_flag f);
void geak_eval_note(struct geak_eval *ev, enum geak_note n);
int geak_eval_has_note(const struct geak_eval *ev, enum geak_note n);
/* A note or flag named as the judge names it; 0, or -1 when the name is
 * not one of the record's. */
int geak_eval_note_named(struct geak_eval *ev, const char *name);
int geak_eval_flag_named(struct geak_eval *ev, const char *name);
void geak_eval_static_note(struct geak_eval *ev, const char *rule);
/* The judge's verdict.json into ev: call, exec, stage, reason, message,
 * traceback, flags, notes and runs. */
void geak_eval_take_verdict(struct geak_eval *ev, json_t *verdict);
struct geak_case *geak_eval_add_case(struct geak_eval *ev, const char *key);
/* The "eval" object (new reference). */
json_t *geak_eval_json(const struct geak_eval *ev);
/* Redact the credentials geak-eval started with (secrets.h) from what the
 * candidate's runs said: message, traceback, output tails, runs, static
 * findings.  The number of redactions there, earlier ones included. */
size_t geak_eval_redact(struct geak_eval *ev);
/* The notes of sandbox layers missing from ev->sandbox_more: no PID
 * namespace for the job, no private root for its worker. */
void geak_eval_sandbox_notes(struct geak_eval *ev);

#endif
