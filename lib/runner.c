/* runner.c: fork/exec of untrusted code in its own process group, with
 * rlimits, a scrubbed environment, optional namespaces (network, PID,
 * mount with a private root, IPC), Landlock, a cgroup, a wall-clock
 * timeout that kills the whole group, and bounded capture.
 *
 * Output goes through pipes that are drained continuously into tail
 * buffers: a flood costs CPU, never memory, and the child never blocks on
 * a full pipe while we wait for it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <linux/landlock.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "runner.h"
#include "eval/sandbox.h"
#include "util.h"

extern char **environ;

void
geak_become_subreaper(void)
{
	static int done;

	if (!done && prctl(PR_SET_CHILD_SUBREAPER, 1) == 0)
		done = 1;
}

static void
sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- the processes started and not yet reaped, for geak_proc_kill_all ---- */

#define LIVE_MAX 1024

static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static pid_t live[LIVE_MAX];
static size_t nlive;
static int dying;

static int
live_add(pid_t pid)
{
	int ok;

	pthread_mutex_lock(&live_mu);
	ok = !dying && nlive < LIVE_MAX;
	if (ok)
		live[nlive++] = pid;
	pthread_mutex_unlock(&live_mu);
	return ok ? 0 : -1;
}

static void
live_del(pid_t pid)
{
	pthread_mutex_lock(&live_mu);
	for (size_t i = 0; i < nlive; i++)
		if (live[i] == pid) {
			live[i] = live[--nlive];
			break;
		}
	pthread_mutex_unlock(&live_mu);
}

void
geak_proc_kill_all(void)
{
	pid_t pids[LIVE_MAX];
	size_t n;

	pthread_mutex_lock(&live_mu);
	dying = 1;
	n = nlive;
	memcpy(pids, live, n * sizeof *pids);
	pthread_mutex_unlock(&live_mu);
	for (size_t i = 0; i < n; i++) {
		kill(-pids[i], SIGKILL);
		kill(pids[i], SIGKILL);
	}
	/* A PID namespace's first process leaves only once everything in
	 * its namespace has: its end is the end of all it started. */
	for (size_t i = 0; i < n; i++)
		for (int t = 0; t < 50 && waitpid(pids[i], NULL, WNOHANG) == 0; t++)
			sleep_s(0.1);
}

/* ---- in the child, between fork and exec: async-signal-safe only ---- */

static noreturn void
child_fail(int fd, const char *what)
{
	char msg[256];
	const char *why = strerror(errno);
	size_t n = 0, wl = strlen(what), yl = strlen(why);

	if (wl > 120)
		wl = 120;
	if (yl > 120)
		yl = 120;
	memcpy(msg, what, wl), n += wl;
	msg[n++] = ':', msg[n++] = ' ';
	memcpy(msg + n, why, yl), n += yl;
	(void)!write(fd, msg, n);
	_exit(127);
}

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
enter_namespaces(const struct geak_spawn *s, int ns, uid_t uid, gid_t gid, int report)
{
	int applied = 0, r;

	if ((ns & CLONE_NEWUSER) && map_root(uid, gid) < 0)
		child_fail(report, "user namespace");
	if (ns & CLONE_NEWUSER)
		applied |= GEAK_SB_USERNS;
	if (s->cgroup && join_cgroup(s->cgroup) == 0)
		applied |= GEAK_SB_CGROUP;
	/* Mounts made below must not reach the host's namespace. */
	if ((ns & CLONE_NEWNS) && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		child_fail(report, "private mounts");
	if ((ns & CLONE_NEWNS) && (s->sandbox & GEAK_SB_VIEW) && s->view) {
		if ((r = geak_view_enter(s->view)) == -2)
			child_fail(report, "the sandbox's root");
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

static void
set_limit(int res, rlim_t v)
{
	struct rlimit rl = { v, v };

	setrlimit(res, &rl);
}

static noreturn void
child(const struct geak_spawn *s, int out, int err, int report, pid_t parent, int ns,
    uid_t uid, gid_t gid)
{
	sigset_t none;
	unsigned char applied = 0;
	int in;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* A parent that closed its memory to its uid (PR_SET_DUMPABLE 0) left
	 * this copy's /proc/self files root's: the user namespace's maps must
	 * be ours to write.  exec decides afresh anyway. */
	prctl(PR_SET_DUMPABLE, 1);
	/* In a PID namespace of its own the parent is outside: getppid() is 0. */
	if (!(ns & CLONE_NEWPID) && getppid() != parent)
		_exit(127);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);

	in = open(s->stdin_path ? s->stdin_path : "/dev/null", O_RDONLY);
	if (in < 0)
		child_fail(report, s->stdin_path ? s->stdin_path : "/dev/null");
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		child_fail(report, "dup2");
	if (s->keep_fd >= 0 && (dup2(s->keep_fd, 3) < 0 || fcntl(3, F_SETFD, 0) < 0))
		child_fail(report, "dup2");
	/* Everything else closes at exec, the report pipe included. */
	if (syscall(SYS_close_range, s->keep_fd >= 0 ? 4 : 3, ~0U, 4 /* CLOEXEC */) < 0)
		for (int fd = s->keep_fd >= 0 ? 4 : 3; fd < 4096; fd++)
			fcntl(fd, F_SETFD, FD_CLOEXEC);

	set_limit(RLIMIT_CORE, 0);
	if (s->lim.cpu_s > 0)
		set_limit(RLIMIT_CPU, (rlim_t)s->lim.cpu_s);
	if (s->lim.fsize > 0)
		set_limit(RLIMIT_FSIZE, (rlim_t)s->lim.fsize);
	if (s->lim.nofile > 0)
		set_limit(RLIMIT_NOFILE, (rlim_t)s->lim.nofile);
	if (s->lim.nproc > 0)
		set_limit(RLIMIT_NPROC, (rlim_t)s->lim.nproc);

	applied = (unsigned char)enter_namespaces(s, ns, uid, gid, report);
	if (s->cwd && chdir(s->cwd) < 0)
		child_fail(report, s->cwd);
	if ((s->sandbox & GEAK_SB_NONET) && !(applied & GEAK_SB_NONET) && isolate_net() == 0)
		applied |= GEAK_SB_NONET;
	/* Landlock stands in for a private root where there is none: under
	 * it no mount can be made, and the jobs make their own. */
	if ((s->sandbox & GEAK_SB_FSWRITE) && !(applied & GEAK_SB_VIEW) &&
	    isolate_writes(s->write_dirs) == 0)
		applied |= GEAK_SB_FSWRITE;
	(void)!write(report, &applied, 1);
	execvpe(s->argv[0], s->argv, s->envp ? s->envp : environ);
	child_fail(report, s->argv[0]);
}

/* ---- in the parent ---- */

/* The namespaces the layers asked for take, as clone(2) flags. */
static int
ns_flags(int sandbox)
{
	int f = 0;

	if (sandbox & GEAK_SB_NONET)
		f |= CLONE_NEWNET;
	if (sandbox & GEAK_SB_PID)
		f |= CLONE_NEWPID | CLONE_NEWNS;
	if (sandbox & GEAK_SB_VIEW)
		f |= CLONE_NEWNS;
	if (sandbox & GEAK_SB_IPC)
		f |= CLONE_NEWIPC;
	/* A PID namespace's first process must be a new one: so the child
	 * is made with its namespaces, not moved into them by unshare(2). */
	if ((f & ~CLONE_NEWNET) && geteuid() != 0)
		f |= CLONE_NEWUSER;
	return (f & ~CLONE_NEWNET) ? f : 0;
}

/* fork(2) with namespaces: the raw system call, as glibc's clone wants a
 * stack of its own.  The child, like fork's, may only make system calls
 * until it execs. */
static pid_t
fork_ns(int flags)
{
	return (pid_t)syscall(SYS_clone, (unsigned long)flags | SIGCHLD, NULL, NULL, NULL, NULL);
}

int
geak_proc_start(struct geak_proc *p, const struct geak_spawn *s, char *errbuf, size_t errlen)
{
	int out[2], err[2], rep[2], ns;
	pid_t parent = getpid(), pid;
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char msg[300];
	ssize_t n, got = 0;

	memset(p, 0, sizeof *p);
	p->pidfd = p->out_fd = p->err_fd = -1;
	geak_become_subreaper();
	if (pipe2(out, O_CLOEXEC) < 0)
		goto fail_errno;
	if (pipe2(err, O_CLOEXEC) < 0) {
		close(out[0]), close(out[1]);
		goto fail_errno;
	}
	if (pipe2(rep, O_CLOEXEC) < 0) {
		close(out[0]), close(out[1]), close(err[0]), close(err[1]);
		goto fail_errno;
	}
	ns = ns_flags(s->sandbox);
	/* Where the kernel refuses the namespaces, none: the child still
	 * tries a network namespace alone, as before. */
	if (!ns || (pid = fork_ns(ns)) < 0) {
		ns = 0;
		pid = fork();
	}
	if (pid < 0) {
		close(out[0]), close(out[1]), close(err[0]), close(err[1]);
		close(rep[0]), close(rep[1]);
		goto fail_errno;
	}
	if (pid == 0)
		child(s, out[1], err[1], rep[1], parent, ns, uid, gid);
	setpgid(pid, pid); /* either side may win the race; both set it */
	if (live_add(pid) < 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		close(out[0]), close(err[0]), close(rep[0]);
		snprintf(errbuf, errlen, "cannot start %s: shutting down", s->argv[0]);
		return -1;
	}
	close(out[1]), close(err[1]), close(rep[1]);
	p->pid = pid;
	p->out_fd = out[0];
	p->err_fd = err[0];
	p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	while ((n = read(rep[0], msg + got, sizeof msg - 1 - (size_t)got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += n;
	}
	close(rep[0]);
	if (got >= 1)
		p->sandbox = (unsigned char)msg[0];
	if (got > 1 || got == 0) {
		msg[got] = '\0';
		snprintf(errbuf, errlen, "cannot run %s", got > 1 ? msg + 1 : "the program");
		geak_proc_kill(p, 0);
		return -1;
	}
	return 0;
fail_errno:
	snprintf(errbuf, errlen, "cannot start %s: %s", s->argv[0], strerror(errno));
	return -1;
}

static void
close_fds(struct geak_proc *p)
{
	if (p->out_fd >= 0)
		close(p->out_fd);
	if (p->err_fd >= 0)
		close(p->err_fd);
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->out_fd = p->err_fd = p->pidfd = -1;
}

/* Reap whatever of the group has already exited, the leader's status
 * kept apart. */
static void
reap_group_nohang(struct geak_proc *p, int *leader_done, int *status, struct rusage *ru)
{
	pid_t w;
	int st;

	if (!*leader_done) {
		w = wait4(p->pid, &st, WNOHANG, ru);
		if (w == p->pid) {
			*leader_done = 1;
			*status = st;
		}
	}
	while ((w = waitpid(-p->pid, &st, WNOHANG)) > 0)
		;
}

static int
kill_and_reap(struct geak_proc *p, double grace_s, int *status, struct rusage *ru)
{
	int leader_done = 0, st = 0;
	double deadline = geak_now() + grace_s;

	if (grace_s > 0) {
		kill(-p->pid, SIGTERM);
		while (geak_now() < deadline) {
			reap_group_nohang(p, &leader_done, &st, ru);
			if (leader_done && kill(-p->pid, 0) < 0 && errno == ESRCH)
				goto done;
			sleep_s(0.01);
		}
	}
	kill(-p->pid, SIGKILL);
	if (!leader_done) {
		while (wait4(p->pid, &st, 0, ru) < 0 && errno == EINTR)
			;
	}
	/* Members re-parented to us (we are a subreaper) die and are reaped
	 * here; waitpid(-pgid) sees only this group. */
	while (waitpid(-p->pid, NULL, 0) > 0 || errno == EINTR)
		;
done:
	if (status)
		*status = st;
	return 0;
}

void
geak_proc_kill(struct geak_proc *p, double grace_s)
{
	struct rusage ru;

	if (p->pid > 0) {
		kill_and_reap(p, grace_s, NULL, &ru);
		live_del(p->pid);
	}
	close_fds(p);
	p->pid = 0;
}

int
geak_proc_reap(struct geak_proc *p, int *status, struct rusage *ru)
{
	int st = 0;

	while (wait4(p->pid, &st, 0, ru) < 0) {
		if (errno != EINTR) {
			st = 0;
			break;
		}
	}
	kill(-p->pid, SIGKILL);
	while (waitpid(-p->pid, NULL, 0) > 0 || errno == EINTR)
		;
	live_del(p->pid);
	if (status)
		*status = st;
	return 0;
}

/* ---- bounded capture ---- */

struct tail {
	char *buf;
	size_t len, cap, cut;
};

static void
tail_add(struct tail *t, const char *s, size_t n)
{
	if (n >= t->cap) {
		t->cut += t->len + (n - t->cap);
		memcpy(t->buf, s + (n - t->cap), t->cap);
		t->len = t->cap;
		return;
	}
	if (t->len + n > t->cap) {
		size_t drop = t->len + n - t->cap;
		memmove(t->buf, t->buf + drop, t->len - drop);
		t->len -= drop;
		t->cut += drop;
	}
	memcpy(t->buf + t->len, s, n);
	t->len += n;
}

/* Read what is there; 0 at EOF (fd closed), 1 otherwise. */
static int
drain(int *fd, struct tail *t)
{
	char chunk[65536];
	ssize_t n = read(*fd, chunk, sizeof chunk);

	if (n > 0) {
		tail_add(t, chunk, (size_t)n);
		return 1;
	}
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	close(*fd);
	*fd = -1;
	return 0;
}

static int
poll_ms(double deadline)
{
	double left;

	if (deadline <= 0)
		return 200;
	left = deadline - geak_now();
	if (left <= 0)
		return 0;
	return left > 0.2 ? 200 : (int)(left * 1000) + 1;
}

int
geak_run(struct geak_run *r)
{
	struct geak_proc p;
	struct tail to = {0}, te = {0};
	double start = geak_now(), deadline = 0, drain_until = 0;
	int status = 0, leader_done = 0;

	to.cap = r->out_cap ? r->out_cap : 65536;
	te.cap = r->err_cap ? r->err_cap : 65536;
	if (geak_proc_start(&p, &r->spawn, r->errmsg, sizeof r->errmsg) < 0) {
		r->started = 0;
		return -1;
	}
	r->started = 1;
	r->sandbox = p.sandbox;
	to.buf = geak_xmalloc(to.cap + 1);
	te.buf = geak_xmalloc(te.cap + 1);
	if (r->timeout_s > 0)
		deadline = start + r->timeout_s;
	for (;;) {
		struct pollfd fds[3];
		int nfds = 0, ms;

		if (p.out_fd >= 0)
			fds[nfds++] = (struct pollfd){ p.out_fd, POLLIN, 0 };
		if (p.err_fd >= 0)
			fds[nfds++] = (struct pollfd){ p.err_fd, POLLIN, 0 };
		if (!leader_done && p.pidfd >= 0)
			fds[nfds++] = (struct pollfd){ p.pidfd, POLLIN, 0 };
		if (leader_done && nfds == 0)
			break;
		ms = poll_ms(leader_done ? drain_until : deadline);
		if (!leader_done && p.pidfd < 0 && ms > 20)
			ms = 20; /* no pidfd: fall back to polling waitpid */
		if (poll(fds, (nfds_t)nfds, ms) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < nfds; i++) {
			if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			if (fds[i].fd == p.out_fd)
				drain(&p.out_fd, &to);
			else if (fds[i].fd == p.err_fd)
				drain(&p.err_fd, &te);
		}
		if (!leader_done) {
			struct rusage ru;
			int st;
			if (wait4(p.pid, &st, WNOHANG, &ru) == p.pid) {
				leader_done = 1;
				status = st;
				r->ru = ru;
				/* The leader is gone: what is left of its group goes
				 * too, and the pipes get one more second to drain
				 * (a setsid() escapee could hold them open). */
				kill(-p.pid, SIGKILL);
				while (waitpid(-p.pid, NULL, WNOHANG) > 0)
					;
				drain_until = geak_now() + 1.0;
				continue;
			}
			if (deadline > 0 && geak_now() >= deadline) {
				r->timed_out = 1;
				kill_and_reap(&p, r->grace_s > 0 ? r->grace_s : 2.0, &status, &r->ru);
				leader_done = 1;
				drain_until = geak_now() + 0.5;
				continue;
			}
		} else if (geak_now() >= drain_until) {
			break;
		}
	}
	/* Reap the rest of the group (killed above) without hanging. */
	kill(-p.pid, SIGKILL);
	while (waitpid(-p.pid, NULL, 0) > 0 || errno == EINTR)
		;
	live_del(p.pid);
	close_fds(&p);
	r->wall_s = geak_now() - start;
	if (WIFEXITED(status)) {
		r->exited = 1;
		r->code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		r->signaled = 1;
		r->sig = WTERMSIG(status);
	}
	to.buf[to.len] = te.buf[te.len] = '\0';
	r->out = to.buf, r->out_len = to.len, r->out_cut = to.cut;
	r->err = te.buf, r->err_len = te.len, r->err_cut = te.cut;
	return 0;
}

void
geak_run_free(struct geak_run *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* ---- environment ---- */

int
geak_env_is_secret(const char *name)
{
	static const char *marks[] = {
		"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL",
		"AUTH", "COOKIE", "PRIVATE", NULL,
	};
	char up[256];
	size_t i;

	for (i = 0; name[i] && name[i] != '=' && i < sizeof up - 1; i++)
		up[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
	up[i] = '\0';
	for (const char **m = marks; *m; m++)
		if (strstr(up, *m))
			return 1;
	return 0;
}

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

/* ---- private directories ---- */

static const char *
tmp_parent(const char *parent)
{
	const char *tmp = parent;

	if (!tmp || !*tmp)
		tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	return tmp;
}

char *
geak_mkworkdir(const char *parent, const char *prefix)
{
	const char *tmp = tmp_parent(parent);
	char *path;

	path = geak_xasprintf("%s/%sXXXXXX", tmp, prefix ? prefix : "geak-");
	if (!mkdtemp(path)) {
		int saved = errno;
		free(path);
		errno = saved;
		return NULL;
	}
	return path;
}

static int
unlock_dir(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)ftw;
	if (type == FTW_D || type == FTW_DNR)
		chmod(path, 0700);
	return 0;
}

static int
remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	if (remove(path) < 0 && errno != ENOENT)
		return -1;
	return 0;
}

int
geak_rmtree(const char *path)
{
	/* Untrusted code may have left directories unreadable: open them up
	 * first, then delete depth-first, never following links. */
	nftw(path, unlock_dir, 32, FTW_PHYS);
	return nftw(path, remove_one, 32, FTW_PHYS | FTW_DEPTH);
}

/* ---- what a killed run leaves ---- */

/* The start time of process pid (clock ticks since boot), from
 * /proc/PID/stat; 0, -1 (errno ENOENT: no such process). */
static int
start_time(long pid, unsigned long long *start)
{
	char path[64], *s, *p, *save = NULL;
	int r = -1, field = 3;

	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	if (!(s = geak_read_file(path, NULL)))
		return -1;
	/* Field 22; the name in field 2 may hold spaces and parentheses. */
	p = strrchr(s, ')');
	for (char *t = p ? strtok_r(p + 1, " ", &save) : NULL; t; t = strtok_r(NULL, " ", &save))
		if (field++ == 22) {
			r = sscanf(t, "%llu", start) == 1 ? 0 : -1;
			break;
		}
	free(s);
	if (r < 0)
		errno = EINVAL;
	return r;
}

static int
pid_ns(unsigned long long *ns)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) < 0)
		return -1;
	*ns = (unsigned long long)st.st_ino;
	return 0;
}

int
geak_proc_ident(char out[GEAK_IDENT_MAX])
{
	unsigned long long start, ns;

	if (start_time((long)getpid(), &start) < 0 || pid_ns(&ns) < 0)
		return -1;
	snprintf(out, GEAK_IDENT_MAX, "%ld-%llu-%llu", (long)getpid(), start, ns);
	return 0;
}

int
geak_proc_ident_gone(const char *ident)
{
	long pid;
	unsigned long long start, ns, now, our_ns;
	int used = 0;

	if (sscanf(ident, "%ld-%llu-%llu%n", &pid, &start, &ns, &used) != 3 || pid <= 0 ||
	    (ident[used] && ident[used] != '\n' && ident[used] != '.'))
		return 0;
	if (pid_ns(&our_ns) < 0 || ns != our_ns)
		return 0;
	if (start_time(pid, &now) < 0)
		return errno == ENOENT;
	return now != start;
}

int
geak_workdir_claim(const char *dir)
{
	char ident[GEAK_IDENT_MAX], *path, *line;
	int fd, r;

	if (geak_proc_ident(ident) < 0)
		return -1;
	path = geak_xasprintf("%s/%s", dir, GEAK_OWNER_FILE);
	line = geak_xasprintf("%s\n", ident);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	r = fd >= 0 && geak_write_all(fd, line, strlen(line)) == 0 ? 0 : -1;
	if (fd >= 0 && close(fd) < 0)
		r = -1;
	free(path), free(line);
	return r;
}

/* 1 when name under parent is a folder of ours whose owner has ended. */
static int
dead_workdir(const char *parent, const char *name)
{
	char *owner = geak_xasprintf("%s/%s", name, GEAK_OWNER_FILE);
	char *ident = geak_read_untrusted(parent, owner, GEAK_IDENT_MAX, NULL);
	struct stat st;
	int dead = 0;

	if (ident) {
		char *path = geak_xasprintf("%s/%s", parent, name);
		dead = lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
		    geak_proc_ident_gone(ident);
		free(path);
	}
	free(owner), free(ident);
	return dead;
}

void
geak_workdir_sweep(const char *parent, const char *prefix)
{
	const char *tmp = tmp_parent(parent);
	DIR *d = opendir(tmp);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) || !dead_workdir(tmp, e->d_name))
			continue;
		char *path = geak_xasprintf("%s/%s", tmp, e->d_name);
		geak_rmtree(path);
		free(path);
	}
	closedir(d);
}
