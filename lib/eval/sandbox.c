/* sandbox.c: what confines untrusted programs: the layers a child enters
 * between fork and exec (namespaces, Landlock, a cgroup), the private
 * root among them, the environment they are given, the cgroups that
 * bound and kill their jobs, and a run's clean-up on a signal.
 *
 * The view is planned in the parent, where allocation is allowed, as a
 * list of operations; the child only walks the list with system calls,
 * since it runs between fork and exec of a threaded process. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/landlock.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>

#include "runner.h"
#include "eval/sandbox.h"
#include "secrets.h"
#include "util.h"

extern char **environ;

/* ---- the layers, entered in the child: system calls only ---- */

/* A network namespace: as root directly, else inside a user namespace. */
static int
isolate_net(void)
{
	char map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();

	if (unshare(CLONE_NEWNET) == 0)
		return 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
		return -1;
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (geak_write_str("/proc/self/uid_map", map) < 0)
		return -1;
	geak_write_str("/proc/self/setgroups", "deny\n");
	snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	return geak_write_str("/proc/self/gid_map", map);
}

static void
allow_beneath(int rs, const char *dir, unsigned long long access)
{
	struct landlock_path_beneath_attr pb = {0};

	pb.allowed_access = access;
	pb.parent_fd = open(dir, O_PATH | O_CLOEXEC);
	if (pb.parent_fd < 0)
		return;
	syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
	close(pb.parent_fd);
}

/* Landlock: every kind of write is handled, and allowed only beneath the
 * given directories.  Reads stay unrestricted (Python must import). */
static int
isolate_writes(const char *const *dirs)
{
	struct landlock_ruleset_attr attr = {0};
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
	    LANDLOCK_CREATE_RULESET_VERSION);
	int rs;

	if (abi < 1)
		return -1;
	attr.handled_access_fs = LANDLOCK_ACCESS_FS_WRITE_FILE |
	    LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
	    LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
	    LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
	    LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
	    LANDLOCK_ACCESS_FS_MAKE_SYM;
#ifdef LANDLOCK_ACCESS_FS_REFER
	if (abi >= 2)
		attr.handled_access_fs |= LANDLOCK_ACCESS_FS_REFER;
#endif
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
	if (abi >= 3)
		attr.handled_access_fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
#endif
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
	if (rs < 0)
		return -1;
	for (; dirs && *dirs; dirs++)
		allow_beneath(rs, *dirs, attr.handled_access_fs);
	/* The GPU runtime names its threads in /proc/self/task/ (every job's
	 * own) and does not start where it cannot; not root, the files of
	 * /proc that reach further are not the user's to write anyway. */
	if (geteuid() != 0)
		allow_beneath(rs, "/proc", attr.handled_access_fs & (LANDLOCK_ACCESS_FS_WRITE_FILE
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
		    | LANDLOCK_ACCESS_FS_TRUNCATE
#endif
		    ));
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
		close(rs);
		return -1;
	}
	close(rs);
	return 0;
}

/* Decimal, for the maps and cgroup.procs (snprintf may allocate). */
static char *
utoa(char *end, unsigned long v)
{
	*--end = '\0';
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

/* In a new user namespace: be its root, as the caller's uid and gid, so
 * that the program keeps the namespace's capabilities after exec. */
static int
map_root(uid_t uid, gid_t gid)
{
	char num[32], map[48] = "0 ";
	size_t n;

	n = strlen(map);
	strcpy(map + n, utoa(num + sizeof num, uid));
	strcat(map, " 1\n");
	if (geak_write_str("/proc/self/uid_map", map) < 0)
		return -1;
	geak_write_str("/proc/self/setgroups", "deny\n");
	map[n] = '\0';
	strcpy(map + n, utoa(num + sizeof num, gid));
	strcat(map, " 1\n");
	return geak_write_str("/proc/self/gid_map", map);
}

static int
join_cgroup(const char *dir)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);

	if (n + sizeof "/cgroup.procs" > sizeof path)
		return -1;
	memcpy(path, dir, n);
	memcpy(path + n, "/cgroup.procs", sizeof "/cgroup.procs");
	return geak_write_str(path, "0\n");
}

/* Without a view: at least a /proc of the new PID namespace, and a
 * /dev/shm of its own. */
static int
fresh_proc(void)
{
	mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
	return mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
}

/* The namespaces the child enters, and its view: its first layers. */
static int
enter_namespaces(const struct geak_sandbox *s, int ns, uid_t uid, gid_t gid, int report)
{
	int applied = 0, r;

	if ((ns & CLONE_NEWUSER) && map_root(uid, gid) < 0)
		geak_child_fail(report, "user namespace");
	if (ns & CLONE_NEWUSER)
		applied |= GEAK_SB_USERNS;
	if (s->cgroup && join_cgroup(s->cgroup) == 0)
		applied |= GEAK_SB_CGROUP;
	/* Mounts made below must not reach the host's namespace. */
	if ((ns & CLONE_NEWNS) && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		geak_child_fail(report, "private mounts");
	if ((ns & CLONE_NEWNS) && (s->layers & GEAK_SB_VIEW) && s->view) {
		if ((r = geak_view_enter(s->view)) == -2)
			geak_child_fail(report, "the sandbox's root");
		if (r == 0)
			applied |= GEAK_SB_VIEW;
	}
	if ((ns & CLONE_NEWPID) && ((applied & GEAK_SB_VIEW) || fresh_proc() == 0))
		applied |= GEAK_SB_PID;
	if (ns & CLONE_NEWNET)
		applied |= GEAK_SB_NONET;
	if (ns & CLONE_NEWIPC)
		applied |= GEAK_SB_IPC;
	return applied;
}

/* The layers in the order they stack: the namespaces the child was made
 * in and its view, then a network namespace alone where it was made in
 * none, then Landlock. */
static int
confine(const void *arg, int ns, uid_t uid, gid_t gid, int report)
{
	const struct geak_sandbox *s = arg;
	int applied = enter_namespaces(s, ns, uid, gid, report);

	if ((s->layers & GEAK_SB_NONET) && !(applied & GEAK_SB_NONET) && isolate_net() == 0)
		applied |= GEAK_SB_NONET;
	/* Landlock stands in for a private root where there is none: under
	 * it no mount can be made, and the jobs make their own. */
	if ((s->layers & GEAK_SB_FSWRITE) && !(applied & GEAK_SB_VIEW) &&
	    isolate_writes(s->write_dirs) == 0)
		applied |= GEAK_SB_FSWRITE;
	return applied;
}

/* ---- the layers, asked for in the parent ---- */

/* The namespaces the layers asked for take, as clone(2) flags. */
static int
ns_flags(int layers)
{
	int f = 0;

	if (layers & GEAK_SB_NONET)
		f |= CLONE_NEWNET;
	if (layers & GEAK_SB_PID)
		f |= CLONE_NEWPID | CLONE_NEWNS;
	if (layers & GEAK_SB_VIEW)
		f |= CLONE_NEWNS;
	if (layers & GEAK_SB_IPC)
		f |= CLONE_NEWIPC;
	/* A PID namespace's first process must be a new one: so the child
	 * is made with its namespaces, not moved into them by unshare(2). */
	if ((f & ~CLONE_NEWNET) && geteuid() != 0)
		f |= CLONE_NEWUSER;
	return (f & ~CLONE_NEWNET) ? f : 0;
}

void
geak_sandbox_spawn(struct geak_spawn *sp, const struct geak_sandbox *s)
{
	sp->clone_ns = ns_flags(s->layers);
	sp->confine = confine;
	sp->confine_arg = s;
}

/* ---- the environment ---- */

static int
name_matches(const char *entry, const char *pat)
{
	size_t pl = strlen(pat);

	if (pl && pat[pl - 1] == '*')
		return strncmp(entry, pat, pl - 1) == 0;
	return strncmp(entry, pat, pl) == 0 && entry[pl] == '=';
}

static int
same_name(const char *a, const char *b)
{
	while (*a && *a != '=' && *a == *b)
		a++, b++;
	return (*a == '=' || !*a) && (*b == '=' || !*b);
}

char **
geak_env_build(const char *const *allow, const char *const *set)
{
	size_t n = 0, cap = 16;
	char **env = geak_xmalloc(cap * sizeof *env);

	for (char **e = environ; *e; e++) {
		int ok = 0;
		for (const char *const *a = allow; a && *a && !ok; a++)
			ok = name_matches(*e, *a);
		for (const char *const *s = set; ok && s && *s; s++)
			if (same_name(*e, *s))
				ok = 0;
		if (!ok || geak_env_is_secret(*e))
			continue;
		if (n + 2 > cap)
			env = geak_xrealloc(env, (cap *= 2) * sizeof *env);
		env[n++] = geak_xstrdup(*e);
	}
	for (const char *const *s = set; s && *s; s++) {
		if (geak_env_is_secret(*s) || !strchr(*s, '='))
			continue;
		if (n + 2 > cap)
			env = geak_xrealloc(env, (cap *= 2) * sizeof *env);
		env[n++] = geak_xstrdup(*s);
	}
	env[n] = NULL;
	return env;
}

void
geak_env_free(char **env)
{
	if (!env)
		return;
	for (char **e = env; *e; e++)
		free(*e);
	free(env);
}

/* ---- the view, planned ---- */

static void
add_op(struct geak_view *v, int kind, int is_dir, unsigned long flags, const char *path,
    const char *arg)
{
	v->ops = geak_xrealloc(v->ops, (v->nops + 1) * sizeof *v->ops);
	v->ops[v->nops++] = (struct geak_view_op){ kind, is_dir, flags, geak_xstrdup(path),
	    arg ? geak_xstrdup(arg) : NULL };
}

/* A host path at its own place: a symbolic link as the same link, a
 * directory or file bound; nothing when it does not exist. */
static void
add_host(struct geak_view *v, int kind, unsigned long flags, const char *path)
{
	struct stat st;
	char target[PATH_MAX];
	ssize_t n;

	if (lstat(path, &st) < 0)
		return;
	if (S_ISLNK(st.st_mode)) {
		if ((n = readlink(path, target, sizeof target - 1)) <= 0)
			return;
		target[n] = '\0';
		add_op(v, GEAK_VIEW_LINK, 0, 0, path, target);
		return;
	}
	add_op(v, kind, S_ISDIR(st.st_mode), flags, path, path);
}

static int
is_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return 1;
	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

static void
add_system(struct geak_view *v)
{
	static const char *const dirs[] = { "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
		"/libx32", NULL };
	/* What the dynamic linker, ldconfig -p (Triton finds libcuda with
	 * it), the C compiler and time zones read; the rest of /etc holds
	 * nothing a job needs and some things it must not see. */
	static const char *const etc[] = { "/etc/ld.so.cache", "/etc/localtime",
		"/etc/alternatives", "/etc/os-release", NULL };
	DIR *d;
	struct dirent *e;

	for (const char *const *p = dirs; *p; p++)
		add_host(v, GEAK_VIEW_RO, MS_REC, *p);
	for (const char *const *p = etc; *p; p++)
		add_host(v, GEAK_VIEW_RO, MS_REC, *p);
	/* ROCm lives in /opt/rocm and its versioned siblings. */
	if ((d = opendir("/opt"))) {
		while ((e = readdir(d)))
			if (!strncmp(e->d_name, "rocm", 4)) {
				char *p = geak_xasprintf("/opt/%s", e->d_name);
				add_host(v, GEAK_VIEW_RO, MS_REC, p);
				free(p);
			}
		closedir(d);
	}
}

static void
add_etc(struct geak_view *v, const struct geak_view_spec *sp)
{
	add_op(v, GEAK_VIEW_FILE, 0, 0, "/etc/passwd", sp->passwd ? sp->passwd : "root:x:0:0::/:/bin/false\n");
	add_op(v, GEAK_VIEW_FILE, 0, 0, "/etc/group", sp->group ? sp->group : "root:x:0:\n");
	add_op(v, GEAK_VIEW_FILE, 0, 0, "/etc/nsswitch.conf", "passwd: files\ngroup: files\nhosts: files\n");
	add_op(v, GEAK_VIEW_FILE, 0, 0, "/etc/hosts", "127.0.0.1 localhost\n::1 localhost\n");
	add_op(v, GEAK_VIEW_FILE, 0, 0, GEAK_VIEW_MARK, "1\n");
}

static int
gpu_node(const char *name)
{
	return !strncmp(name, "nvidia", 6) || !strcmp(name, "kfd") || !strcmp(name, "dri");
}

/* The NVIDIA persistence daemon's socket, which the driver may ask. */
static void
add_gpu_daemons(struct geak_view *v)
{
	add_host(v, GEAK_VIEW_RO, 0, "/run/nvidia-persistenced");
}

static void
add_dev(struct geak_view *v, int gpu)
{
	static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", NULL };
	static const char *const links[][2] = { { "fd", "/proc/self/fd" }, { "stdin", "/proc/self/fd/0" },
		{ "stdout", "/proc/self/fd/1" }, { "stderr", "/proc/self/fd/2" } };
	DIR *d;
	struct dirent *e;

	add_op(v, GEAK_VIEW_TMPFS, 1, MS_NOEXEC, "/dev", "mode=0755,size=64k");
	for (const char *const *n = nodes; *n; n++) {
		char *p = geak_xasprintf("/dev/%s", *n);
		add_host(v, GEAK_VIEW_DEV, 0, p);
		free(p);
	}
	if (gpu && (d = opendir("/dev"))) {
		while ((e = readdir(d)))
			if (gpu_node(e->d_name)) {
				char *p = geak_xasprintf("/dev/%s", e->d_name);
				add_host(v, GEAK_VIEW_DEV, MS_REC, p);
				free(p);
			}
		closedir(d);
	}
	for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
		char *p = geak_xasprintf("/dev/%s", links[i][0]);
		add_op(v, GEAK_VIEW_LINK, 0, 0, p, links[i][1]);
		free(p);
	}
	add_op(v, GEAK_VIEW_TMPFS, 1, MS_NODEV, "/dev/shm", "mode=1777");
}

struct user_path {
	const char *path;
	int kind;
};

static int
by_path(const void *a, const void *b)
{
	return strcmp(((const struct user_path *)a)->path, ((const struct user_path *)b)->path);
}

/* The paths given, parents before children: one that a bind of the
 * same kind already shows is skipped. */
static void
add_user(struct geak_view *v, const struct geak_view_spec *sp)
{
	size_t n = 0, cap = 16, kept = 0;
	struct user_path *u = geak_xmalloc(cap * sizeof *u);
	const char *const *lists[] = { sp->ro, sp->rw };

	for (int k = 0; k < 2; k++)
		for (const char *const *p = lists[k]; p && *p; p++) {
			if (**p != '/' || !strcmp(*p, "/"))
				continue;
			if (n == cap)
				u = geak_xrealloc(u, (cap *= 2) * sizeof *u);
			u[n++] = (struct user_path){ *p, k ? GEAK_VIEW_RW : GEAK_VIEW_RO };
		}
	qsort(u, n, sizeof *u, by_path);
	for (size_t i = 0; i < n; i++) {
		int shown = 0;
		struct stat st;
		for (size_t j = 0; j < kept && !shown; j++)
			shown = v->ops[v->nops - kept + j].kind == u[i].kind &&
			    is_under(u[i].path, v->ops[v->nops - kept + j].path);
		for (size_t j = 0; j < v->nops - kept && !shown && u[i].kind == GEAK_VIEW_RO; j++)
			shown = v->ops[j].kind == GEAK_VIEW_RO && is_under(u[i].path, v->ops[j].path);
		if (shown || stat(u[i].path, &st) < 0)
			continue;
		/* A path through symbolic links is bound at the place it was
		 * named by, so that it resolves as it does outside. */
		add_op(v, u[i].kind, S_ISDIR(st.st_mode), MS_REC, u[i].path, u[i].path);
		kept++;
	}
	free(u);
}

void
geak_view_make(struct geak_view *v, const struct geak_view_spec *sp)
{
	memset(v, 0, sizeof *v);
	v->stage = geak_xstrdup(sp->stage);
	add_system(v);
	add_etc(v, sp);
	add_dev(v, sp->gpu);
	if (sp->gpu)
		add_gpu_daemons(v);
	add_op(v, GEAK_VIEW_PROC, 1, 0, "/proc", NULL);
	/* Not recursive: the host's cgroup, debug and security file systems
	 * below /sys stay out; our cgroup subtree replaces /sys/fs/cgroup. */
	add_op(v, GEAK_VIEW_RO, 1, 0, "/sys", "/sys");
	if (sp->cgroup)
		add_op(v, GEAK_VIEW_RW, 1, 0, "/sys/fs/cgroup", sp->cgroup);
	add_op(v, GEAK_VIEW_TMPFS, 1, MS_NODEV, "/tmp", "mode=1777");
	add_user(v, sp);
}

void
geak_view_free(struct geak_view *v)
{
	for (size_t i = 0; i < v->nops; i++) {
		free(v->ops[i].path);
		free(v->ops[i].arg);
	}
	free(v->ops);
	free(v->stage);
	memset(v, 0, sizeof *v);
}

/* ---- the view, entered: system calls only ---- */

/* stage + path into buf; 0 when it does not fit. */
static size_t
join(char *buf, const char *stage, const char *path)
{
	size_t sl = strlen(stage), pl = strlen(path);

	if (sl + pl + 1 > PATH_MAX)
		return 0;
	memcpy(buf, stage, sl);
	memcpy(buf + sl, path, pl + 1);
	return sl + pl;
}

/* mkdir -p of buf beyond its first `from` bytes (the stage, which exists). */
static int
mkdirs(char *buf, size_t from)
{
	for (char *p = buf + from + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		int r = mkdir(buf, 0755);
		*p = '/';
		if (r < 0 && errno != EEXIST)
			return -1;
	}
	if (mkdir(buf, 0755) < 0 && errno != EEXIST)
		return -1;
	return 0;
}

static int
parent_dirs(char *buf, size_t from)
{
	char *slash = strrchr(buf, '/');
	int r;

	if (!slash || (size_t)(slash - buf) <= from)
		return 0;
	*slash = '\0';
	r = mkdirs(buf, from);
	*slash = '/';
	return r;
}

static int
make_target(char *buf, size_t from, int is_dir)
{
	struct stat st;
	int fd;

	if (is_dir)
		return mkdirs(buf, from);
	if (parent_dirs(buf, from) < 0)
		return -1;
	if (stat(buf, &st) == 0)
		return 0; /* there already, in a bind made before */
	fd = open(buf, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* The per-mount flags a bind inherits and, inside a user namespace, may
 * not drop (nosuid, nodev, noexec, the atime mode, ro). */
static unsigned long
kept_flags(const char *path)
{
	struct statfs sf;
	unsigned long f = 0;

	if (statfs(path, &sf) < 0)
		return 0;
	if (sf.f_flags & ST_RDONLY)
		f |= MS_RDONLY;
	if (sf.f_flags & ST_NOSUID)
		f |= MS_NOSUID;
	if (sf.f_flags & ST_NODEV)
		f |= MS_NODEV;
	if (sf.f_flags & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sf.f_flags & ST_NOATIME)
		f |= MS_NOATIME;
	if (sf.f_flags & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (sf.f_flags & ST_RELATIME)
		f |= MS_RELATIME;
	if (!(f & (MS_NOATIME | MS_RELATIME)))
		f |= MS_STRICTATIME;
	return f;
}

static int
bind(const struct geak_view_op *op, const char *buf)
{
	unsigned long extra = op->kind == GEAK_VIEW_RO ? MS_RDONLY | MS_NOSUID | MS_NODEV
	    : op->kind == GEAK_VIEW_RW ? MS_NOSUID | MS_NODEV : MS_NOSUID | MS_NOEXEC;

	/* Inside a user namespace the host's submounts are locked to their
	 * parent, which is then bound whole or not at all. */
	if (mount(op->arg, buf, NULL, MS_BIND | (op->flags & MS_REC), NULL) < 0 &&
	    (errno != EINVAL || (op->flags & MS_REC) ||
	    mount(op->arg, buf, NULL, MS_BIND | MS_REC, NULL) < 0))
		return -1;
	return mount(NULL, buf, NULL, MS_REMOUNT | MS_BIND | extra | kept_flags(buf), NULL);
}

static int
write_content(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	size_t n = strlen(s);
	ssize_t w;

	if (fd < 0)
		return -1;
	while (n > 0 && (w = write(fd, s, n)) > 0)
		s += w, n -= (size_t)w;
	close(fd);
	return n ? -1 : 0;
}

static int
apply(const struct geak_view_op *op, const char *stage)
{
	char buf[PATH_MAX];
	size_t from = strlen(stage);

	if (!join(buf, stage, op->path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	switch (op->kind) {
	case GEAK_VIEW_LINK:
		if (parent_dirs(buf, from) < 0)
			return -1;
		return symlink(op->arg, buf) < 0 && errno != EEXIST ? -1 : 0;
	case GEAK_VIEW_FILE:
		if (parent_dirs(buf, from) < 0)
			return -1;
		return write_content(buf, op->arg);
	case GEAK_VIEW_TMPFS:
		if (make_target(buf, from, 1) < 0)
			return -1;
		return mount("tmpfs", buf, "tmpfs", MS_NOSUID | op->flags, op->arg);
	case GEAK_VIEW_PROC:
		if (make_target(buf, from, 1) < 0)
			return -1;
		return mount("proc", buf, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	default:
		if (make_target(buf, from, op->is_dir) < 0)
			return -1;
		return bind(op, buf);
	}
}

int
geak_view_enter(const struct geak_view *v)
{
	int saved;

	if (mount("tmpfs", v->stage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4m") < 0)
		return -1;
	for (size_t i = 0; i < v->nops; i++)
		if (apply(&v->ops[i], v->stage) < 0)
			goto undo;
	if (chdir(v->stage) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		goto undo;
	/* The old root now lies over the new one: detach it, and what is
	 * left is the view alone. */
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return -2;
	/* Nothing but the binds listed as written may be written. */
	mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL);
	return 0;
undo:
	saved = errno;
	(void)!chdir("/");
	umount2(v->stage, MNT_DETACH);
	errno = saved;
	return -1;
}

/* ---- cgroups ---- */

static struct {
	struct geak_cgroup_info info;
	char *base;
	pthread_mutex_t mu;
	char **leaves;
	size_t nleaves;
} cg = { .mu = PTHREAD_MUTEX_INITIALIZER };

static char *
read_small(const char *path)
{
	char *s = geak_read_file(path, NULL);

	return s ? s : geak_xstrdup("");
}

/* The cgroup2 hierarchy's mount point and the root it shows. */
static char *
cgroup2_mount(char **root)
{
	FILE *fp = fopen("/proc/self/mountinfo", "re");
	char line[4096], *best = NULL;

	*root = NULL;
	if (!fp)
		return NULL;
	while (fgets(line, sizeof line, fp)) {
		char *sep = strstr(line, " - "), mroot[PATH_MAX], mnt[PATH_MAX];
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8) ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", mroot, mnt) != 2)
			continue;
		if (!best || !strcmp(mnt, "/sys/fs/cgroup")) {
			free(best), free(*root);
			best = geak_xstrdup(mnt);
			*root = geak_xstrdup(mroot);
		}
	}
	fclose(fp);
	return best;
}

/* Our cgroup as a directory under the mount point. */
static char *
own_cgroup(const char *mnt, const char *mroot)
{
	char *all = read_small("/proc/self/cgroup"), *p = strstr(all, "0::"), *nl, *dir = NULL;
	size_t rl = strlen(mroot);

	if (p && (p == all || p[-1] == '\n')) {
		p += 3;
		if ((nl = strchr(p, '\n')))
			*nl = '\0';
		if (!strcmp(mroot, "/"))
			dir = geak_xasprintf("%s%s", mnt, strcmp(p, "/") ? p : "");
		else if (!strncmp(p, mroot, rl) && (p[rl] == '/' || !p[rl]))
			dir = geak_xasprintf("%s%s", mnt, p + rl);
	}
	free(all);
	return dir;
}

/* Delegation: we are the only process in dir, so we can move into a leaf
 * of our own and let dir's children have controllers. */
static int
take_over(const char *dir, const char *ident)
{
	char *procs = geak_xasprintf("%s/cgroup.procs", dir), *list = read_small(procs);
	char *self = geak_xasprintf("%s/geak-eval-%s.self", dir, ident);
	char *selfprocs = geak_xasprintf("%s/cgroup.procs", self), pid[32];
	int ok;

	snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	ok = !strcmp(list, pid) && mkdir(self, 0755) == 0;
	if (ok && geak_write_str(selfprocs, pid) < 0) {
		rmdir(self);
		ok = 0;
	}
	free(procs), free(list), free(self), free(selfprocs);
	return ok;
}

/* Turn on memory and pids for dir's children, as far as dir has them. */
static void
enable_controllers(const char *dir)
{
	char *ctl = geak_xasprintf("%s/cgroup.controllers", dir);
	char *sub = geak_xasprintf("%s/cgroup.subtree_control", dir);
	char *have = read_small(ctl);

	if (strstr(have, "memory"))
		geak_write_str(sub, "+memory");
	if (strstr(have, "pids"))
		geak_write_str(sub, "+pids");
	free(ctl), free(sub), free(have);
}

static void empty_leaf(const char *path);

/* A dead run's cgroup: what is left in it killed, it and its leaves
 * removed. */
static void
drop_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *sub;
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		sub = geak_xasprintf("%s/%s", path, e->d_name);
		drop_tree(sub);
		free(sub);
	}
	if (d)
		closedir(d);
	empty_leaf(path);
	rmdir(path);
}

/* The cgroups under parent of geak-eval processes that have ended
 * (geak-eval-IDENT, geak-eval-IDENT.self), removed; a live one's, and
 * one not named so, stay. */
static void
sweep_dead(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *path;
		if (e->d_type != DT_DIR || strncmp(e->d_name, "geak-eval-", 10) ||
		    !geak_proc_ident_gone(e->d_name + 10))
			continue;
		path = geak_xasprintf("%s/%s", parent, e->d_name);
		drop_tree(path);
		free(path);
	}
	if (d)
		closedir(d);
}

void
geak_cgroup_init(void)
{
	char *mroot, *mnt = cgroup2_mount(&mroot), *own = mnt ? own_cgroup(mnt, mroot) : NULL;
	char *parent = NULL, *sub, *on, ident[GEAK_IDENT_MAX];

	if (geak_proc_ident(ident) < 0)
		snprintf(ident, sizeof ident, "%ld", (long)getpid());
	if (own && !strcmp(own, mnt))
		parent = geak_xstrdup(mnt); /* the root may hold processes and children */
	else if (own && take_over(own, ident)) {
		enable_controllers(own);
		parent = geak_xstrdup(own);
	} else if (mnt && geteuid() == 0)
		parent = geak_xstrdup(mnt);
	else if (own)
		parent = geak_xstrdup(own); /* kill only: controllers need an empty parent */
	if (parent) {
		sweep_dead(parent);
		cg.base = geak_xasprintf("%s/geak-eval-%s", parent, ident);
		if (mkdir(cg.base, 0755) < 0) {
			free(cg.base);
			cg.base = NULL;
		}
	}
	if (cg.base) {
		enable_controllers(cg.base);
		sub = geak_xasprintf("%s/cgroup.subtree_control", cg.base);
		on = read_small(sub);
		cg.info.ok = 1;
		cg.info.base = cg.base;
		cg.info.memory = strstr(on, "memory") != NULL;
		cg.info.pids = strstr(on, "pids") != NULL;
		free(sub), free(on);
	}
	free(mnt), free(mroot), free(own), free(parent);
}

const struct geak_cgroup_info *
geak_cgroup(void)
{
	return &cg.info;
}

static void
set_limit(const char *dir, const char *file, long long v)
{
	char *path = geak_xasprintf("%s/%s", dir, file), num[32];

	if (v < 0)
		snprintf(num, sizeof num, "max");
	else
		snprintf(num, sizeof num, "%lld", v);
	if (geak_write_str(path, num) < 0 && errno != ENOENT)
		geak_warn("%s:", path);
	free(path);
}

char *
geak_cgroup_leaf(const char *name, long long memory_max, long pids_max)
{
	char *path = NULL;

	pthread_mutex_lock(&cg.mu);
	if (cg.base)
		path = geak_xasprintf("%s/%s", cg.base, name);
	pthread_mutex_unlock(&cg.mu);
	if (!path)
		return NULL;
	if (mkdir(path, 0755) < 0) {
		/* Left by a worker of this name before: emptied, made anew. */
		int existed = errno == EEXIST;
		if (existed)
			geak_cgroup_drop(path);
		if (!existed || (mkdir(path, 0755) < 0 && errno != EEXIST)) {
			free(path);
			return NULL;
		}
	}
	if (memory_max > 0 && cg.info.memory) {
		set_limit(path, "memory.max", memory_max);
		set_limit(path, "memory.swap.max", 0);
		/* On OOM the whole job goes, not one process of it. */
		set_limit(path, "memory.oom.group", 1);
	}
	if (pids_max > 0 && cg.info.pids)
		set_limit(path, "pids.max", pids_max);
	pthread_mutex_lock(&cg.mu);
	if (!cg.base) { /* the subtree went meanwhile */
		pthread_mutex_unlock(&cg.mu);
		rmdir(path);
		free(path);
		return NULL;
	}
	cg.leaves = geak_xrealloc(cg.leaves, (cg.nleaves + 1) * sizeof *cg.leaves);
	cg.leaves[cg.nleaves++] = geak_xstrdup(path);
	pthread_mutex_unlock(&cg.mu);
	return path;
}

void
geak_cgroup_memory(const char *leaf, long long memory_max)
{
	if (leaf && cg.info.memory)
		set_limit(leaf, "memory.max", memory_max > 0 ? memory_max : -1);
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Without cgroup.kill (before Linux 5.14): each process listed. */
static void
kill_listed(const char *dir)
{
	char *procs = geak_xasprintf("%s/cgroup.procs", dir), *list = read_small(procs);

	for (char *p = list, *end; *p; p = end) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid > 0)
			kill((pid_t)pid, SIGKILL);
	}
	free(procs), free(list);
}

static void
empty_leaf(const char *path)
{
	char *killf = geak_xasprintf("%s/cgroup.kill", path);
	char *events = geak_xasprintf("%s/cgroup.events", path);

	for (int i = 0; i < 200; i++) {
		char *ev = read_small(events);
		int busy = strstr(ev, "populated 1") != NULL;
		free(ev);
		if (!busy)
			break;
		if (geak_write_str(killf, "1") < 0)
			kill_listed(path);
		sleep_ms(10);
	}
	free(killf), free(events);
}

void
geak_cgroup_drop(const char *path)
{
	empty_leaf(path);
	for (int i = 0; i < 50 && rmdir(path) < 0 && errno == EBUSY; i++)
		sleep_ms(10);
	pthread_mutex_lock(&cg.mu);
	for (size_t i = 0; i < cg.nleaves; i++)
		if (!strcmp(cg.leaves[i], path)) {
			free(cg.leaves[i]);
			cg.leaves[i] = cg.leaves[--cg.nleaves];
			break;
		}
	pthread_mutex_unlock(&cg.mu);
}

void
geak_cgroup_fini(void)
{
	char *base;

	/* Taken first, so that no leaf is made while the others go. */
	pthread_mutex_lock(&cg.mu);
	base = cg.base;
	cg.base = NULL;
	pthread_mutex_unlock(&cg.mu);
	if (!base)
		return;
	for (;;) {
		char *leaf = NULL;
		pthread_mutex_lock(&cg.mu);
		if (cg.nleaves)
			leaf = geak_xstrdup(cg.leaves[0]);
		pthread_mutex_unlock(&cg.mu);
		if (!leaf)
			break;
		geak_cgroup_drop(leaf);
		free(leaf);
	}
	empty_leaf(base);
	rmdir(base);
	memset(&cg.info, 0, sizeof cg.info);
	free(base);
}

/* ---- a run's clean-up ---- */

static sigset_t cleanup_sigs;
static char *cleanup_dir;
/* Who tears the run down: the signal's thread or the ending main path,
 * never both at once (the cgroups and the dir are freed once). */
enum { TEARDOWN_NONE, TEARDOWN_MAIN, TEARDOWN_SIGNAL };
static _Atomic int teardown_owner = TEARDOWN_NONE;
static _Atomic int teardown_done;

/* The workers killed, the rest of the process may reach exit() before
 * the clean-up is done: it waits, so that the run ends by the signal. */
static void
wait_for_cleanup(void)
{
	while (atomic_load(&teardown_owner) == TEARDOWN_SIGNAL)
		pause();
}

static void *
cleanup_thread(void *arg)
{
	int sig, none = TEARDOWN_NONE;

	(void)arg;
	if (sigwait(&cleanup_sigs, &sig) != 0)
		return NULL;
	if (atomic_compare_exchange_strong(&teardown_owner, &none, TEARDOWN_SIGNAL)) {
		geak_abandon();
		geak_proc_kill_all();
		geak_cgroup_fini();
		if (cleanup_dir)
			geak_rmtree(cleanup_dir);
	} else {
		/* The main path is removing what the run made: let it end. */
		while (!atomic_load(&teardown_done))
			sleep_ms(10);
	}
	signal(sig, SIG_DFL);
	pthread_sigmask(SIG_UNBLOCK, &cleanup_sigs, NULL);
	raise(sig);
	_exit(128 + sig);
}

void
geak_cleanup_begin(void)
{
	int none = TEARDOWN_NONE;

	if (atomic_compare_exchange_strong(&teardown_owner, &none, TEARDOWN_MAIN))
		return;
	for (;;)
		pause();
}

void
geak_cleanup_end(void)
{
	atomic_store(&teardown_done, 1);
}

void
geak_cleanup_block(void)
{
	int err;

	sigemptyset(&cleanup_sigs);
	sigaddset(&cleanup_sigs, SIGINT);
	sigaddset(&cleanup_sigs, SIGTERM);
	sigaddset(&cleanup_sigs, SIGHUP);
	if ((err = pthread_sigmask(SIG_BLOCK, &cleanup_sigs, NULL)) != 0)
		geak_die(GEAK_EXIT_FATAL, "cannot block signals: %s", strerror(err));
}

void
geak_cleanup_on_signals(const char *dir)
{
	pthread_t t;
	int err;

	geak_cleanup_block();
	cleanup_dir = dir ? geak_xstrdup(dir) : NULL;
	if ((err = pthread_create(&t, NULL, cleanup_thread, NULL)) != 0)
		geak_die(GEAK_EXIT_FATAL, "cannot watch for signals: %s", strerror(err));
	pthread_detach(t);
	if (atexit(wait_for_cleanup) != 0)
		geak_die(GEAK_EXIT_FATAL, "atexit: cannot register the clean-up");
}
