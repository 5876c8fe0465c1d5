/* runner.h: run programs in a process group of their own, confined as
 * the caller asks (eval/sandbox.h), killed whole, their output captured
 * within bounds. */
#ifndef GEAK_RUNNER_H
#define GEAK_RUNNER_H

#include <stddef.h>
#include <stdnoreturn.h>
#include <sys/resource.h>
#include <sys/types.h>

struct geak_limits {
	long cpu_s;        /* RLIMIT_CPU, seconds; 0: none */
	long long fsize;   /* RLIMIT_FSIZE, bytes; 0: none */
	long nofile;       /* RLIMIT_NOFILE; 0: none */
	long nproc;        /* RLIMIT_NPROC; 0: none (counts all of the uid's processes) */
};

struct geak_spawn {
	char *const *argv;
	char *const *envp;              /* the child's whole environment */
	const char *cwd;                /* NULL: inherit */
	const char *stdin_path;         /* NULL: /dev/null */
	struct geak_limits lim;
	int keep_fd;                    /* a descriptor the child keeps (as 3); -1: none */
	/* Confinement beyond the process group and rlimits, as
	 * geak_sandbox_spawn (eval/sandbox.h) sets it.  clone_ns: the
	 * namespaces (clone(2) flags) the child is made in; where the
	 * kernel refuses them it is made without, and confine is told ns 0.
	 * confine: called in the child after its limits, before its chdir
	 * and exec, with system calls only; it returns the layers it
	 * applied, or ends the child by geak_child_fail.  NULL: none. */
	int clone_ns;
	int (*confine)(const void *arg, int ns, uid_t uid, gid_t gid, int report);
	const void *confine_arg;
};

struct geak_proc {
	pid_t pid;           /* also the process group id */
	int pidfd;           /* -1 when the kernel lacks pidfd_open */
	int out_fd, err_fd;  /* read ends of the child's stdout and stderr */
	int sandbox;         /* layers the confinement applied */
	int errpipe;         /* internal: exec failure report */
};

/* Start argv[0] (a path, or searched in PATH) in a new process group. */
int geak_proc_start(struct geak_proc *p, const struct geak_spawn *s, char *errbuf, size_t errlen);
/* Kill the whole group: TERM, up to grace_s for it to leave, then KILL;
 * then reap every member that was re-parented to us. */
void geak_proc_kill(struct geak_proc *p, double grace_s);
/* Reap the leader (blocking), kill and reap what is left of its group. */
int geak_proc_reap(struct geak_proc *p, int *status, struct rusage *ru);
/* Kill every process started here and not yet reaped, with its group,
 * and wait (a few seconds at most) for each to go; start none after.
 * For a clean-up on a signal. */
void geak_proc_kill_all(void);
/* In the child, before exec: report "what: strerror(errno)" on fd (the
 * parent's start fails with it) and exit 127.  Async-signal-safe. */
noreturn void geak_child_fail(int fd, const char *what);

/* The whole cycle for a run-to-completion child, with bounded capture. */
struct geak_run {
	struct geak_spawn spawn;
	double timeout_s;         /* wall clock; 0: none */
	double grace_s;           /* TERM to KILL; 0: 2 s */
	size_t out_cap, err_cap;  /* bytes of each stream kept (the tail); 0: 64 KiB */

	int started;              /* 0: could not start, see errmsg */
	int exited, code;         /* normal exit and its status */
	int signaled, sig;        /* killed by a signal */
	int timed_out;            /* we killed it at the timeout */
	int sandbox;              /* layers the confinement applied */
	double wall_s;
	char *out, *err;          /* NUL-terminated tails */
	size_t out_len, err_len;
	size_t out_cut, err_cut;  /* bytes dropped from the front */
	struct rusage ru;
	char errmsg[256];
};
int geak_run(struct geak_run *r);
void geak_run_free(struct geak_run *r);

/* Become the reaper of orphaned descendants (PR_SET_CHILD_SUBREAPER), so
 * that a grandchild whose parent exits is still ours to kill and reap.
 * geak_proc_start calls it once. */
void geak_become_subreaper(void);

#endif
