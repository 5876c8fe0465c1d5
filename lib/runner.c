/* runner.c: fork/exec of untrusted code in its own process group, with
 * rlimits, the confinement its caller asks for (eval/sandbox.c), a
 * wall-clock timeout that kills the whole group, and bounded capture.
 *
 * Output goes through pipes that are drained continuously into tail
 * buffers: a flood costs CPU, never memory, and the child never blocks on
 * a full pipe while we wait for it. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "runner.h"
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

noreturn void
geak_child_fail(int fd, const char *what)
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
		geak_child_fail(report, s->stdin_path ? s->stdin_path : "/dev/null");
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		geak_child_fail(report, "dup2");
	if (s->keep_fd >= 0 && (dup2(s->keep_fd, 3) < 0 || fcntl(3, F_SETFD, 0) < 0))
		geak_child_fail(report, "dup2");
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

	if (s->confine)
		applied = (unsigned char)s->confine(s->confine_arg, ns, uid, gid, report);
	if (s->cwd && chdir(s->cwd) < 0)
		geak_child_fail(report, s->cwd);
	(void)!write(report, &applied, 1);
	execvpe(s->argv[0], s->argv, s->envp ? s->envp : environ);
	geak_child_fail(report, s->argv[0]);
}

/* ---- in the parent ---- */

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
	ns = s->clone_ns;
	/* Where the kernel refuses the namespaces, none: the confinement is
	 * told so, and applies what it can without them. */
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
