/* sandbox.h: what confines untrusted programs: the layers they start
 * under (runner.h starts them), the filesystem they see, the environment
 * they are given, the cgroups that bound and kill what they start, and
 * the clean-up of a run on a signal.
 *
 * A view is a private root built from bind mounts of the host's paths at
 * their own places (read-only unless listed as written), a /dev holding
 * only the standard nodes and the GPU's, a fresh /proc, a read-only /sys
 * and a private /tmp.  It is planned in the parent (geak_view_make) and
 * entered between fork and exec (geak_view_enter), which only makes
 * system calls. */
#ifndef GEAK_SANDBOX_H
#define GEAK_SANDBOX_H

#include <stddef.h>

struct geak_spawn;
struct geak_view;

/* ---- the layers ----
 *
 * Each beyond the process group and rlimits is applied when the kernel
 * allows it; the started process's sandbox field says which ones were.
 * Not root, the namespaces come inside a user namespace where the caller
 * is root. */
enum {
	GEAK_SB_NONET = 1,    /* a private network namespace: no network */
	GEAK_SB_FSWRITE = 2,  /* Landlock: writes only under write_dirs */
	GEAK_SB_PID = 4,      /* a PID namespace of its own (it is PID 1), a fresh /proc */
	GEAK_SB_VIEW = 8,     /* a private root holding only view's paths */
	GEAK_SB_IPC = 16,     /* a System V IPC namespace of its own */
	GEAK_SB_USERNS = 32,  /* (applied only) the above inside a user namespace */
	GEAK_SB_CGROUP = 64,  /* (applied only) started in cgroup */
};

struct geak_sandbox {
	int layers;                     /* GEAK_SB_* asked for */
	const char *const *write_dirs;  /* for GEAK_SB_FSWRITE; NULL-terminated */
	const struct geak_view *view;   /* for GEAK_SB_VIEW */
	const char *cgroup;             /* a cgroup directory to start in, or NULL */
};

/* sp's child starts under s's layers; s must live until it has started
 * (geak_proc_start, geak_run). */
void geak_sandbox_spawn(struct geak_spawn *sp, const struct geak_sandbox *s);

/* The environment for untrusted code: variables whose names match the
 * allow-list ("PATH", "LC_*") pass, except any that looks like a secret
 * (geak_env_is_secret, secrets.h); then the "NAME=value" entries of set
 * (which override).  Free with geak_env_free. */
char **geak_env_build(const char *const *allow, const char *const *set);
void geak_env_free(char **env);

struct geak_view_op {
	int kind;            /* GEAK_VIEW_* */
	int is_dir;          /* the target is a directory, not a file */
	unsigned long flags; /* mount flags beyond the kind's */
	char *path;          /* where, inside the view */
	char *arg;           /* bind: the host path; link: its target; file: its
	                      * content; tmpfs: its options */
};

enum { GEAK_VIEW_RO, GEAK_VIEW_RW, GEAK_VIEW_DEV, GEAK_VIEW_TMPFS, GEAK_VIEW_PROC,
	GEAK_VIEW_LINK, GEAK_VIEW_FILE };

struct geak_view {
	char *stage;         /* an empty directory of ours, where the root is built */
	struct geak_view_op *ops;
	size_t nops;
};

struct geak_view_spec {
	const char *stage;
	const char *const *ro;       /* host paths read (NULL-terminated) */
	const char *const *rw;       /* host paths written */
	int gpu;                     /* the GPU device nodes too */
	const char *cgroup;          /* a host cgroup directory shown as /sys/fs/cgroup */
	const char *passwd, *group;  /* the view's /etc/passwd and /etc/group */
};

/* The path of the file every view has at its root, so that a program can
 * tell it runs in one. */
#define GEAK_VIEW_MARK "/.geak-view"

void geak_view_make(struct geak_view *v, const struct geak_view_spec *spec);
void geak_view_free(struct geak_view *v);
/* In the child, in a private mount namespace: build the root and move
 * into it.  0, or -1 with errno set and the host's view kept. */
int geak_view_enter(const struct geak_view *v);

/* ---- cgroups (v2) ----
 *
 * geak_cgroup_init finds a cgroup subtree of ours: below our own cgroup
 * when we are alone in it (delegation), else at the hierarchy's root when
 * we may write there.  Each worker gets two leaves: one it starts in, one
 * for its jobs, with memory.max and pids.max where those controllers are
 * enabled.  Without any, the jobs' limits fall back to rlimits. */
struct geak_cgroup_info {
	int ok;              /* a subtree of ours exists */
	int memory, pids;    /* those controllers can limit its leaves */
	const char *base;    /* its directory */
};
void geak_cgroup_init(void);
const struct geak_cgroup_info *geak_cgroup(void);
/* A leaf NAME under our subtree, emptied first if it exists; limits where
 * the controllers allow (0: none).  The path (caller frees), or NULL. */
char *geak_cgroup_leaf(const char *name, long long memory_max, long pids_max);
/* A job cgroup's memory.max, in bytes (0: no limit), where the memory
 * controller is on. */
void geak_cgroup_memory(const char *leaf, long long memory_max);
/* Kill everything in the leaf, wait for it to empty, remove it. */
void geak_cgroup_drop(const char *path);
/* Every leaf and the subtree itself. */
void geak_cgroup_fini(void);

/* ---- a run's clean-up ----
 *
 * From now on SIGINT, SIGTERM and SIGHUP are taken by a thread of their
 * own: it kills every process the runner started (and so what they
 * started), removes the cgroups and dir (NULL: none), and ends the
 * process with the same signal.  Call geak_cleanup_block first, before
 * any thread is started (a GPU runtime's included): a thread that does
 * not block them would take them, and the process would end at once. */
void geak_cleanup_block(void);
void geak_cleanup_on_signals(const char *dir);
/* The main path's own teardown, between these two: a signal taken
 * before it is left to finish (geak_cleanup_begin does not return), one
 * taken during it waits for geak_cleanup_end, then ends the process. */
void geak_cleanup_begin(void);
void geak_cleanup_end(void);

#endif
