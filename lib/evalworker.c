/* evalworker.c: start, talk to and stop the warm Python worker. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "evalworker.h"
#include "util.h"

/* What the worker's environment keeps from ours: the toolchain and GPU
 * runtime settings; geak_env_build drops anything that looks secret. */
static const char *const env_allow[] = {
	"PATH", "LANG", "LC_*", "LD_LIBRARY_PATH", "PYTHONPATH", "CUDA_HOME",
	"CUDA_PATH", "ROCM_PATH", "HIP_PATH", "HSA_*", "NCCL_NVLS_ENABLE",
	"TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS", "TZ",
	"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY", "OMP_NUM_THREADS", NULL,
};

static void
tail_keep(struct geak_buf *b, const char *s, size_t n)
{
	const size_t cap = 4096;

	geak_buf_append(b, s, n);
	if (b->len > cap) {
		memmove(b->data, b->data + b->len - cap, cap);
		b->len = cap;
		b->data[cap] = '\0';
	}
}

/* Drain the worker's stdout and stderr (children write to files, so this
 * is only the worker's own noise) and read our socket.  Returns a line
 * (caller frees), or NULL at timeout (errno ETIMEDOUT) or EOF (EPIPE). */
static char *
read_line(struct geak_worker *w, double timeout_s)
{
	double deadline = geak_now() + timeout_s;

	for (;;) {
		char *nl = w->rlen ? memchr(w->rbuf, '\n', w->rlen) : NULL;
		if (nl) {
			size_t n = (size_t)(nl - w->rbuf);
			char *line = geak_xstrndup(w->rbuf, n);
			memmove(w->rbuf, nl + 1, w->rlen - n - 1);
			w->rlen -= n + 1;
			return line;
		}
		double left = deadline - geak_now();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return NULL;
		}
		struct pollfd fds[3] = {
			{ w->fd, POLLIN, 0 }, { w->proc.out_fd, POLLIN, 0 },
			{ w->proc.err_fd, POLLIN, 0 },
		};
		int ms = left > 1 ? 1000 : (int)(left * 1000) + 1;
		if (poll(fds, 3, ms) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		for (int i = 1; i < 3; i++) {
			char junk[4096];
			ssize_t n;
			if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP)))
				continue;
			n = read(fds[i].fd, junk, sizeof junk);
			if (n > 0 && i == 2)
				tail_keep(&w->err_tail, junk, (size_t)n);
			if (n == 0) {
				close(fds[i].fd);
				if (i == 1)
					w->proc.out_fd = -1;
				else
					w->proc.err_fd = -1;
			}
		}
		if (fds[0].revents & (POLLIN | POLLHUP)) {
			char chunk[65536];
			ssize_t n = read(w->fd, chunk, sizeof chunk);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				errno = EPIPE;
				return NULL;
			}
			w->rbuf = geak_xrealloc(w->rbuf, w->rlen + (size_t)n + 1);
			memcpy(w->rbuf + w->rlen, chunk, (size_t)n);
			w->rlen += (size_t)n;
		}
	}
}

static char **
worker_env(const struct geak_worker_opts *o)
{
	char *set[16];
	int n = 0;
	char **env;

	set[n++] = geak_xasprintf("HOME=%s", o->home);
	set[n++] = geak_xasprintf("XDG_CACHE_HOME=%s/.cache", o->home);
	set[n++] = geak_xasprintf("TRITON_HOME=%s", o->home);
	set[n++] = geak_xasprintf("TMPDIR=%s", o->home);
	if (o->triton_cache)
		set[n++] = geak_xasprintf("GEAK_TRITON_CACHE=%s", o->triton_cache);
	/* The CUDA driver opens the MPS control pipe (by default under /tmp)
	 * for writing; outside the Landlock write area that fails and the
	 * driver does not start.  Without an MPS daemon of the user's, point
	 * it at a directory the worker may write. */
	if (!getenv("CUDA_MPS_PIPE_DIRECTORY"))
		set[n++] = geak_xasprintf("CUDA_MPS_PIPE_DIRECTORY=%s/mps", o->home);
	/* torch sizes its CPU thread pool to every core; sixteen workers
	 * each making perf inputs with sixteen threads on sixteen cores spent
	 * more time switching than computing. */
	if (o->cpu_threads > 0 && !getenv("OMP_NUM_THREADS"))
		set[n++] = geak_xasprintf("OMP_NUM_THREADS=%d", o->cpu_threads);
	set[n++] = geak_xstrdup("PYTHONDONTWRITEBYTECODE=1");
	set[n++] = geak_xstrdup("PYTHONUNBUFFERED=1");
	/* One mask per vendor: HIP applies CUDA_VISIBLE_DEVICES and
	 * HIP_VISIBLE_DEVICES after ROCR_VISIBLE_DEVICES has renumbered the
	 * devices, so setting two of them to one physical index would hide
	 * every device but the first. */
	if (o->gpu && o->vendor && !strcmp(o->vendor, "amd")) {
		set[n++] = geak_xasprintf("ROCR_VISIBLE_DEVICES=%s", o->gpu);
	} else if (o->gpu && o->vendor) {
		set[n++] = geak_xasprintf("CUDA_VISIBLE_DEVICES=%s", o->gpu);
	} else if (o->gpu) {
		set[n++] = geak_xasprintf("CUDA_VISIBLE_DEVICES=%s", o->gpu);
		set[n++] = geak_xasprintf("HIP_VISIBLE_DEVICES=%s", o->gpu);
	} else {
		set[n++] = geak_xstrdup("GEAK_EVAL_CPU=1");
		set[n++] = geak_xstrdup("TRITON_INTERPRET=1");
		set[n++] = geak_xstrdup("CUDA_VISIBLE_DEVICES=");
	}
	set[n] = NULL;
	env = geak_env_build(env_allow, (const char *const *)set);
	for (int i = 0; i < n; i++)
		free(set[i]);
	return env;
}

int
geak_worker_spawn(struct geak_worker *w, const struct geak_worker_opts *o,
	char *err, size_t errlen)
{
	int sv[2];
	char **env;
	char *argv[] = { (char *)o->python, "-u", "-B", (char *)o->script, NULL };
	struct geak_spawn sp = {0};

	memset(w, 0, sizeof *w);
	w->fd = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -1;
	}
	env = worker_env(o);
	sp.argv = argv;
	sp.envp = env;
	sp.cwd = o->home;
	sp.lim.fsize = o->file_limit;
	sp.sandbox = o->sandbox;
	sp.write_dirs = o->write_dirs;
	sp.keep_fd = sv[1];
	if (geak_proc_start(&w->proc, &sp, err, errlen) < 0) {
		geak_env_free(env);
		close(sv[0]), close(sv[1]);
		return -1;
	}
	geak_env_free(env);
	close(sv[1]);
	w->fd = sv[0];
	w->sandbox = w->proc.sandbox;
	return 0;
}

int
geak_worker_greet(struct geak_worker *w, const struct geak_worker_opts *o,
	char *err, size_t errlen)
{
	char *line = read_line(w, o->start_timeout_s);
	json_error_t je;

	if (!line) {
		snprintf(err, errlen, "the harness worker %s: %s%s%s", o->script,
		    errno == ETIMEDOUT ? "did not start in time" : "exited",
		    w->err_tail.len ? ": " : "", w->err_tail.len ? w->err_tail.data : "");
		geak_worker_stop(w);
		return -1;
	}
	w->hello = json_loads(line, 0, &je);
	free(line);
	if (!json_is_object(w->hello)) {
		snprintf(err, errlen, "the harness worker's greeting is not JSON");
		geak_worker_stop(w);
		return -1;
	}
	return 0;
}

int
geak_worker_start(struct geak_worker *w, const struct geak_worker_opts *o,
	char *err, size_t errlen)
{
	if (geak_worker_spawn(w, o, err, errlen) < 0)
		return -1;
	return geak_worker_greet(w, o, err, errlen);
}

/* write(2) on a socket whose peer died raises SIGPIPE; a dead worker is
 * an error to report, not a reason for geak-eval to die. */
static int
send_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int
geak_worker_send(struct geak_worker *w, json_t *msg, char *err, size_t errlen)
{
	char *s;

	if (w->fd < 0) {
		snprintf(err, errlen, "the harness worker is not running");
		return -1;
	}
	s = json_dumps(msg, JSON_COMPACT);
	if (!s)
		geak_die(GEAK_EXIT_FATAL, "cannot encode a harness request");
	if (send_all(w->fd, s, strlen(s)) < 0 || send_all(w->fd, "\n", 1) < 0) {
		snprintf(err, errlen, "the harness worker: %s", strerror(errno));
		free(s);
		geak_worker_stop(w);
		return -1;
	}
	free(s);
	return 0;
}

json_t *
geak_worker_read(struct geak_worker *w, double timeout_s, char *err, size_t errlen)
{
	char *line;
	json_t *resp;

	if (w->fd < 0) {
		snprintf(err, errlen, "the harness worker is not running");
		return NULL;
	}
	line = read_line(w, timeout_s);
	if (!line) {
		snprintf(err, errlen, "the harness worker %s%s%.500s",
		    errno == ETIMEDOUT ? "did not answer in time" : "exited",
		    w->err_tail.len ? ": " : "", w->err_tail.len ? w->err_tail.data : "");
		geak_worker_stop(w);
		return NULL;
	}
	resp = json_loads(line, 0, NULL);
	free(line);
	if (!json_is_object(resp)) {
		json_decref(resp);
		snprintf(err, errlen, "the harness worker answered something other than JSON");
		return NULL;
	}
	return resp;
}

json_t *
geak_worker_call(struct geak_worker *w, json_t *req, double timeout_s,
	char *err, size_t errlen)
{
	if (geak_worker_send(w, req, err, errlen) < 0)
		return NULL;
	return geak_worker_read(w, timeout_s, err, errlen);
}

void
geak_worker_stop(struct geak_worker *w)
{
	if (w->fd >= 0) {
		send_all(w->fd, "{\"op\":\"quit\"}\n", 14);
		close(w->fd);
		w->fd = -1;
	}
	if (w->proc.pid > 0)
		geak_proc_kill(&w->proc, 1.0);
	json_decref(w->hello);
	w->hello = NULL;
	free(w->rbuf);
	w->rbuf = NULL;
	w->rlen = 0;
	geak_buf_free(&w->err_tail);
}
