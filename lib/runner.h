/* runner.h: run untrusted programs in a sandboxed process group. */
#ifndef GEAK_RUNNER_H
#define GEAK_RUNNER_H

#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

struct geak_limits {
	long cpu_s;        /* RLIMIT_CPU, seconds; 0: none */
	long long fsize;   /* RLIMIT_FSIZE, bytes; 0: none */
	long nofile;       /* RLIMIT_NOFILE; 0: none */
	long nproc;        /* RLIMIT_NPROC; 0: none (counts all of the uid's processes) */
};

/* Sandbox layers beyond the process group and rlimits.  Each is applied
 * when the kernel allows it; the result says which ones were.  Not root,
 * the namespaces come inside a user namespace where the caller is root. */
enum {
	GEAK_SB_NONET = 1,    /* a private network namespace: no network */
	GEAK_SB_FSWRITE = 2,  /* Landlock: writes only under write_dirs */
	GEAK_SB_PID = 4,      /* a PID namespace of its own (it is PID 1), a fresh /proc */
	GEAK_SB_VIEW = 8,     /* a private root holding only spawn.view's paths */
	GEAK_SB_IPC = 16,     /* a System V IPC namespace of its own */
	GEAK_SB_USERNS = 32,  /* (applied only) the above inside a user namespace */
	GEAK_SB_CGROUP = 64,  /* (applied only) started in spawn.cgroup */
};

struct geak_view;

struct geak_spawn {
	char *const *argv;
	char *const *envp;              /* the child's whole environment */
	const char *cwd;                /* NULL: inherit */
	const char *stdin_path;         /* NULL: /dev/null */
	struct geak_limits lim;
	int sandbox;                    /* GEAK_SB_* */
	const char *const *write_dirs;  /* for GEAK_SB_FSWRITE; NULL-terminated */
	const struct geak_view *view;   /* for GEAK_SB_VIEW (sandbox.h) */
	const char *cgroup;             /* a cgroup directory to start in, or NULL */
	int keep_fd;                    /* a descriptor the child keeps (as 3); -1: none */
};

struct geak_proc {
	pid_t pid;           /* also the process group id */
	int pidfd;           /* -1 when the kernel lacks pidfd_open */
	int out_fd, err_fd;  /* read ends of the child's stdout and stderr */
	int sandbox;         /* layers actually applied */
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
	int sandbox;              /* GEAK_SB_* layers applied */
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

/* The environment for untrusted code: variables whose names match the
 * allow-list ("PATH", "LC_*") pass, except any that looks like a secret;
 * then the "NAME=value" entries of set (which override).  Free with
 * geak_env_free. */
char **geak_env_build(const char *const *allow, const char *const *set);
void geak_env_free(char **env);
int geak_env_is_secret(const char *name);

/* A fresh private directory (mode 0700) under parent (NULL: $TMPDIR or
 * /tmp); caller frees the path.  geak_rmtree removes it and everything in
 * it without following symbolic links. */
char *geak_mkworkdir(const char *parent, const char *prefix);
int geak_rmtree(const char *path);

/* ---- what a killed run leaves ----
 *
 * A process is named by its pid, its start time and its PID namespace
 * ("PID-START-NS"), so that a later process given the same pid is not
 * taken for it. */
#define GEAK_IDENT_MAX 64
/* This process's name; 0, or -1 where /proc cannot say. */
int geak_proc_ident(char out[GEAK_IDENT_MAX]);
/* 1 when the process so named has ended; 0 when it lives, or where that
 * cannot be told (another PID namespace's, a name not of that form). */
int geak_proc_ident_gone(const char *ident);
/* dir (made by geak_mkworkdir) marked as this process's: its file
 * GEAK_OWNER_FILE names it.  0 or -1. */
#define GEAK_OWNER_FILE "owner"
int geak_workdir_claim(const char *dir);
/* The folders named PREFIX... under parent (NULL: $TMPDIR or /tmp) of
 * ours whose owner has ended, removed; one without an owner file (made
 * a moment ago, or by an older version) stays. */
void geak_workdir_sweep(const char *parent, const char *prefix);

#endif
