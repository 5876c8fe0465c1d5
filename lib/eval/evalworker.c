/* evalworker.c: start, talk to and stop the warm Python worker. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "eval/evalworker.h"
#include "eval/harness.h"
#include "eval/sandbox.h"
#include "util.h"

/* What the worker's environment keeps from ours: the toolchain and GPU
 * runtime settings; geak_env_build drops anything that looks secret. */
static const char *const env_allow[] = {
	"PATH", "LANG", "LC_*", "LD_LIBRARY_PATH", "PYTHONPATH", "CUDA_HOME",
	"CUDA_PATH", "ROCM_PATH", "HIP_PATH", "HSA_*", "NCCL_NVLS_ENABLE",
	"TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS", "TZ",
	"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY", "OMP_NUM_THREADS",
	GEAK_ENV_PYPROFILE, NULL,
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

/* ---- the sandbox of a worker ---- */

/* Each running worker has a number: its jobs' uid (the base plus it),
 * the names of its cgroups. */
#define MAX_IDS 1024
#define UID_BASE_DEFAULT 65536

static pthread_mutex_t sb_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned char id_used[MAX_IDS];

static int
take_id(void)
{
	int id = -1;

	pthread_mutex_lock(&sb_mu);
	for (int i = 0; i < MAX_IDS && id < 0; i++)
		if (!id_used[i])
			id_used[i] = 1, id = i;
	pthread_mutex_unlock(&sb_mu);
	return id;
}

static void
give_id(int id)
{
	pthread_mutex_lock(&sb_mu);
	if (id >= 0 && id < MAX_IDS)
		id_used[id] = 0;
	pthread_mutex_unlock(&sb_mu);
}

static long
uid_base(void)
{
	const char *s = getenv("GEAK_SANDBOX_UID");

	return s && *s ? geak_parse_long(s, "GEAK_SANDBOX_UID", 1, 2000000000L) : UID_BASE_DEFAULT;
}

/* What the worker reads, beyond the system's directories: the Python
 * environment as the interpreter itself reports it (its prefixes, its
 * whole sys.path after site's .pth files), the harness, and the GPU
 * toolkits the environment names.  Asked once per run. */
static const char probe_py[] =
    "import os, sys, sysconfig\n"
    "p = {x for x in sys.path if x}\n"
    "p |= {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}\n"
    "p |= set(sysconfig.get_paths().values())\n"
    "p |= {os.path.dirname(sys.executable), os.path.dirname(os.path.realpath(sys.executable))}\n"
    "sys.stdout.write('\\0'.join(sorted(p)))\n";

static char **ro_paths;
static size_t nro;
static int ro_state; /* 0: not asked, 1: known, -1: the probe failed */

static void
ro_add1(const char *p)
{
	const char *home = getenv("HOME");

	if (*p != '/' || !strcmp(p, "/"))
		return;
	/* The invoking user's home holds their secrets: never shown whole. */
	if (home && *home && !strncmp(home, p, strlen(p)) &&
	    (home[strlen(p)] == '/' || home[strlen(p)] == '\0' || !strcmp(p, "/"))) {
		geak_warn("sandbox: not showing %s (it holds the home directory %s) to the jobs", p, home);
		return;
	}
	for (size_t i = 0; i < nro; i++)
		if (!strcmp(ro_paths[i], p))
			return;
	ro_paths = geak_xrealloc(ro_paths, (nro + 2) * sizeof *ro_paths);
	ro_paths[nro++] = geak_xstrdup(p);
	ro_paths[nro] = NULL;
}

/* A path as named and, where links lead elsewhere, where it leads. */
static void
ro_add(const char *p)
{
	char *real = realpath(p, NULL);

	ro_add1(p);
	if (real && strcmp(real, p))
		ro_add1(real);
	free(real);
}

static void
ro_add_list(const char *list)
{
	char *copy, *save = NULL;

	if (!list || !*list)
		return;
	copy = geak_xstrdup(list);
	for (char *t = strtok_r(copy, ":", &save); t; t = strtok_r(NULL, ":", &save))
		ro_add(t);
	free(copy);
}

/* The folder a path is in, or NULL at the top (caller frees). */
static char *
dir_of(const char *path)
{
	char *d = geak_xstrdup(path), *slash = strrchr(d, '/');

	if (slash && slash != d) {
		*slash = '\0';
		return d;
	}
	free(d);
	return NULL;
}

static void
ro_add_dir_of(const char *file)
{
	char *d = dir_of(file);

	if (d)
		ro_add(d);
	free(d);
}

/* A profiler's folder, and the tool tree it runs from: NVIDIA's ncu in
 * the toolkit's bin is a launcher that looks for its Nsight Compute tree
 * beside the toolkit, then under /opt/nvidia, where the standalone
 * installer puts it. */
static void
ro_add_profiler(const char *profiler)
{
	char *real = realpath(profiler, NULL), *bin = real ? dir_of(real) : NULL;

	ro_add_dir_of(profiler);
	if (bin)
		ro_add_dir_of(bin);
	free(bin), free(real);
	ro_add("/opt/nvidia");
}

static int
probe_ro_paths(const struct geak_worker_opts *o, char **env)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static const char *const toolkits[] = { "CUDA_HOME", "CUDA_PATH", "ROCM_PATH", "HIP_PATH", NULL };
	char *argv[] = { (char *)o->python, "-c", (char *)probe_py, NULL };
	struct geak_run r = {0};

	pthread_mutex_lock(&mu);
	if (ro_state) {
		pthread_mutex_unlock(&mu);
		return ro_state;
	}
	r.spawn.argv = argv;
	r.spawn.envp = env;
	r.spawn.keep_fd = -1;
	r.timeout_s = 60;
	r.out_cap = 1 << 20;
	if (geak_run(&r) < 0 || !r.exited || r.code) {
		geak_warn("sandbox: %s does not say where it reads from (%s); the jobs see the host's files",
		    o->python, r.started ? (r.err_len ? r.err : "no output") : r.errmsg);
		ro_state = -1;
	} else {
		for (char *p = r.out; p < r.out + r.out_len; p += strlen(p) + 1)
			ro_add(p);
		ro_add_dir_of(o->script);
		if (o->profiler)
			ro_add_profiler(o->profiler);
		/* The interpreter as named (a wrapper, a path through ".."),
		 * so that exec finds it in the view. */
		ro_add(o->python);
		for (const char *const *t = toolkits; *t; t++)
			if (getenv(*t) && *getenv(*t))
				ro_add(getenv(*t));
		ro_add_list(getenv("LD_LIBRARY_PATH"));
		ro_add_list(getenv("GEAK_SANDBOX_RO"));
		ro_state = 1;
	}
	geak_run_free(&r);
	pthread_mutex_unlock(&mu);
	return ro_state;
}

/* The directories the worker writes, for its view and its jobs' covers. */
static char **
written_dirs(const struct geak_worker_opts *o)
{
	size_t n = 0;
	char **rw = geak_xcalloc(16, sizeof *rw);

	for (const char *const *d = o->write_dirs; d && *d && n < 15; d++)
		if (strcmp(*d, "/dev"))
			rw[n++] = geak_xstrdup(*d);
	return rw;
}

static void
free_strv(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

/* What the jobs are told of their sandbox (geakh/sandbox.py), in the
 * worker's first request. */
static json_t *
sandbox_conf(const struct geak_worker *w, const struct geak_worker_opts *o, char **rw)
{
	const struct geak_cgroup_info *cg = geak_cgroup();
	json_t *c = json_object(), *hide = json_array();
	char *view_cg;
	long base = uid_base();

	if (w->id >= 0 && geteuid() == 0) {
		json_object_set_new(c, GEAK_BOX_UID, json_integer(base + w->id));
		json_object_set_new(c, GEAK_BOX_GID, json_integer(base));
	}
	if (w->cg_job) {
		view_cg = geak_xasprintf("/sys/fs/cgroup/%s", strrchr(w->cg_job, '/') + 1);
		json_object_set_new(c, GEAK_BOX_CGROUP, json_string(view_cg));
		json_object_set_new(c, GEAK_BOX_CGROUP_HOST, json_string(w->cg_job));
		json_object_set_new(c, GEAK_BOX_MEMORY_CGROUP, json_boolean(cg->memory && o->job_memory > 0));
		json_object_set_new(c, GEAK_BOX_PIDS_CGROUP, json_boolean(cg->pids && o->job_procs > 0));
		free(view_cg);
	}
	if (o->job_memory > 0)
		json_object_set_new(c, GEAK_BOX_MEMORY, json_integer(o->job_memory));
	if (o->job_procs > 0)
		json_object_set_new(c, GEAK_BOX_PROCS, json_integer(o->job_procs));
	for (char **d = rw; *d; d++)
		json_array_append_new(hide, json_string(*d));
	json_object_set_new(c, GEAK_BOX_HIDE, hide);
	/* What the worker reads: a job that covers a parent of one (its own
	 * /tmp) shows it again. */
	if (ro_state > 0) {
		json_t *ro = json_array();
		for (size_t i = 0; i < nro; i++)
			json_array_append_new(ro, json_string(ro_paths[i]));
		json_object_set_new(c, GEAK_BOX_RO, ro);
	}
	return c;
}

/* The private root: the system's directories, what the probe found,
 * the run's directories written; its /etc names the jobs' uid. */
static int
make_view(struct geak_view *v, const struct geak_worker *w, const struct geak_worker_opts *o,
    char **env, char **rw)
{
	char *stage, *passwd, *group;
	long base = uid_base();
	struct geak_view_spec sp = {0};

	if (!o->run_dir || probe_ro_paths(o, env) < 0)
		return -1;
	stage = geak_xasprintf("%s/.root", o->run_dir);
	if (mkdir(stage, 0700) < 0 && errno != EEXIST) {
		geak_warn("%s:", stage);
		free(stage);
		return -1;
	}
	passwd = geak_xasprintf("root:x:0:0:root:/:/bin/false\ngeak:x:%ld:%ld:geak-eval job:/:/bin/false\n",
	    base + (w->id >= 0 ? w->id : 0), base);
	group = geak_xasprintf("root:x:0:\ngeak:x:%ld:\n", base);
	sp.stage = stage;
	sp.ro = (const char *const *)ro_paths;
	sp.rw = (const char *const *)rw;
	sp.gpu = o->gpu != NULL;
	sp.cgroup = w->cg_job ? geak_cgroup()->base : NULL;
	sp.passwd = passwd;
	sp.group = group;
	geak_view_make(v, &sp);
	free(stage), free(passwd), free(group);
	return 0;
}

static void
sandbox_up(struct geak_worker *w, const struct geak_worker_opts *o)
{
	char name[32];

	w->id = take_id();
	if (w->id < 0 || !geak_cgroup()->ok)
		return;
	snprintf(name, sizeof name, "w%d", w->id);
	w->cg_worker = geak_cgroup_leaf(name, 0, 0);
	snprintf(name, sizeof name, "j%d", w->id);
	w->cg_job = geak_cgroup_leaf(name, o->job_memory, o->job_procs);
	w->job_memory_set = o->job_memory;
}

static void
sandbox_down(struct geak_worker *w)
{
	if (w->cg_job)
		geak_cgroup_drop(w->cg_job);
	if (w->cg_worker)
		geak_cgroup_drop(w->cg_worker);
	free(w->cg_job), free(w->cg_worker);
	w->cg_job = w->cg_worker = NULL;
	give_id(w->id);
	w->id = -1;
}

json_t *
geak_worker_sandbox(const struct geak_worker *w)
{
	json_t *o = json_is_object(w->job_sandbox) ? json_deep_copy(w->job_sandbox) : json_object();

	json_object_set_new(o, "view", json_boolean(w->sandbox & GEAK_SB_VIEW));
	json_object_set_new(o, "userns", json_boolean(w->sandbox & GEAK_SB_USERNS));
	return o;
}

/* ---- start, talk, stop ---- */

static char **
worker_env(const struct geak_worker_opts *o)
{
	char *set[20];
	int n = 0;
	char **env;

	set[n++] = geak_xasprintf("HOME=%s", o->home);
	set[n++] = geak_xasprintf("XDG_CACHE_HOME=%s/.cache", o->home);
	set[n++] = geak_xasprintf("TRITON_HOME=%s", o->home);
	set[n++] = geak_xasprintf("TMPDIR=%s", o->home);
	if (o->triton_cache)
		set[n++] = geak_xasprintf("%s=%s", GEAK_ENV_TRITON_CACHE, o->triton_cache);
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
		set[n++] = geak_xstrdup(GEAK_ENV_EVAL_CPU "=1");
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
	int sv[2], started;
	char **env, **rw;
	json_t *conf, *start;
	char *argv[] = { (char *)o->python, "-u", "-B", (char *)o->script, NULL };
	struct geak_spawn sp = {0};
	struct geak_sandbox sb = {0};
	struct geak_view view = {0};

	memset(w, 0, sizeof *w);
	w->fd = -1;
	w->id = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -1;
	}
	sandbox_up(w, o);
	rw = written_dirs(o);
	if ((o->sandbox & GEAK_SB_VIEW) && o->run_dir) {
		env = worker_env(o);
		probe_ro_paths(o, env);
		geak_env_free(env);
	}
	conf = sandbox_conf(w, o, rw);
	env = worker_env(o);
	sp.argv = argv;
	sp.envp = env;
	sp.cwd = o->home;
	sp.lim.fsize = o->file_limit;
	sb.layers = o->sandbox;
	if ((sb.layers & GEAK_SB_VIEW) && make_view(&view, w, o, env, rw) == 0)
		sb.view = &view;
	else
		sb.layers &= ~GEAK_SB_VIEW;
	sb.write_dirs = o->write_dirs;
	sb.cgroup = w->cg_worker;
	geak_sandbox_spawn(&sp, &sb);
	sp.keep_fd = sv[1];
	started = geak_proc_start(&w->proc, &sp, err, errlen) == 0;
	geak_view_free(&view);
	geak_env_free(env);
	free_strv(rw);
	close(sv[1]);
	if (!started) {
		json_decref(conf);
		close(sv[0]);
		sandbox_down(w);
		return -1;
	}
	w->fd = sv[0];
	w->sandbox = w->proc.sandbox;
	/* The worker reads its sandbox settings before it probes the device
	 * as a job sees it; its greeting answers them. */
	start = json_pack("{s:s, s:o}", GEAK_REQ_OP, GEAK_OP_START, GEAK_REQ_SANDBOX, conf);
	if (!start)
		geak_die(GEAK_EXIT_FATAL, "json: out of memory");
	started = geak_worker_send(w, start, err, errlen) == 0;
	json_decref(start);
	return started ? 0 : -1;
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
	if (json_is_object(json_object_get(resp, GEAK_RESP_JOB_SANDBOX))) {
		json_decref(w->job_sandbox);
		w->job_sandbox = json_incref(json_object_get(resp, GEAK_RESP_JOB_SANDBOX));
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
		static const char quit[] = "{\"" GEAK_REQ_OP "\":\"" GEAK_OP_QUIT "\"}\n";
		send_all(w->fd, quit, sizeof quit - 1);
		close(w->fd);
		w->fd = -1;
	}
	if (w->proc.pid > 0)
		geak_proc_kill(&w->proc, 1.0);
	sandbox_down(w);
	json_decref(w->job_sandbox);
	w->job_sandbox = NULL;
	json_decref(w->hello);
	w->hello = NULL;
	free(w->rbuf);
	w->rbuf = NULL;
	w->rlen = 0;
	geak_buf_free(&w->err_tail);
}
