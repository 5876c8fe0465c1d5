/* Unit tests of the process runner: timeouts that kill whole trees,
 * orphans, floods, limits, environment scrubbing, work directories, the
 * namespaces and the private root. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "runner.h"
#include "eval/sandbox.h"
#include "secrets.h"
#include "util.h"

static char *env_argv[] = { "/usr/bin/env", NULL };

static void
sh(struct geak_run *r, const char *script, double timeout)
{
	static char *argv[4];

	memset(r, 0, sizeof *r);
	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = (char *)script;
	argv[3] = NULL;
	r->spawn.argv = argv;
	r->spawn.keep_fd = -1;
	r->timeout_s = timeout;
	r->grace_s = 0.5;
	assert_int_equal(geak_run(r), 0);
}

/* No process of the given group may remain, zombie or not. */
static void
assert_group_gone(pid_t pgid)
{
	assert_int_equal(kill(-pgid, 0), -1);
	assert_int_equal(errno, ESRCH);
}

static pid_t
pid_from(const char *out)
{
	return (pid_t)strtol(out, NULL, 10);
}

static void
test_exit_status(void **state)
{
	struct geak_run r;

	(void)state;
	sh(&r, "echo hello; echo oops >&2; exit 7", 10);
	assert_true(r.exited);
	assert_int_equal(r.code, 7);
	assert_false(r.timed_out);
	assert_string_equal(r.out, "hello\n");
	assert_string_equal(r.err, "oops\n");
	geak_run_free(&r);
}

/* A tree whose members all ignore TERM dies by KILL at the timeout. */
static void
test_timeout_kills_tree_ignoring_term(void **state)
{
	struct geak_run r;
	double t0 = geak_now();

	(void)state;
	sh(&r, "trap '' TERM; (trap '' TERM; sleep 60) & (trap '' TERM; sleep 60) & "
	    "echo $$; sleep 60", 0.5);
	assert_true(r.timed_out);
	assert_true(r.signaled);
	assert_int_equal(r.sig, SIGKILL);
	assert_true(geak_now() - t0 < 5.0);
	assert_group_gone(pid_from(r.out));
	geak_run_free(&r);
}

/* A child that forks a grandchild and exits at once: the grandchild is
 * killed and reaped, and the run does not wait for it. */
static void
test_orphan_grandchild_reaped(void **state)
{
	struct geak_run r;
	double t0 = geak_now();
	pid_t gc;

	(void)state;
	sh(&r, "sleep 60 & echo $!; exit 0", 30);
	assert_true(r.exited);
	assert_int_equal(r.code, 0);
	assert_false(r.timed_out);
	assert_true(geak_now() - t0 < 5.0);
	gc = pid_from(r.out);
	assert_true(gc > 0);
	assert_int_equal(kill(gc, 0), -1); /* gone, and not a zombie of ours */
	assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
	geak_run_free(&r);
}

/* Output far beyond the cap: the tail is kept, the cut is counted, and
 * memory stays at the cap. */
static void
test_output_flood(void **state)
{
	struct geak_run r;

	(void)state;
	memset(&r, 0, sizeof r);
	sh(&r, "head -c 50000000 /dev/zero | tr '\\0' x; echo; echo END", 30);
	assert_true(r.exited);
	assert_int_equal(r.out_len, 65536);
	assert_true(r.out_cut >= 50000000 - 65536);
	assert_int_equal((long long)(r.out_len + r.out_cut), 50000000LL + 5);
	assert_non_null(strstr(r.out, "x\nEND\n"));
	geak_run_free(&r);
}

static void
test_flood_then_timeout(void **state)
{
	struct geak_run r;

	(void)state;
	sh(&r, "yes flood", 0.5);
	assert_true(r.timed_out);
	assert_true(r.out_len <= 65536);
	assert_true(r.out_cut > 0);
	geak_run_free(&r);
}

static void
test_env_scrubbed(void **state)
{
	struct geak_run r;
	const char *const allow[] = { "PATH", "GEAKTEST_*", "MY_API_KEY", NULL };
	const char *const set[] = { "HOME=/nonexistent", "TRITON_INTERPRET=1",
		"OPENAI_API_KEY=sk-set-by-mistake", NULL };
	char **env;

	(void)state;
	setenv("OPENAI_API_KEY", "sk-secret-1", 1);
	setenv("MY_API_KEY", "sk-secret-2", 1);
	setenv("GEAKTEST_TOKEN", "sk-secret-3", 1);
	setenv("GEAKTEST_PLAIN", "visible", 1);
	setenv("UNLISTED", "hidden", 1);
	env = geak_env_build(allow, set);
	memset(&r, 0, sizeof r);
	r.spawn.argv = env_argv;
	r.spawn.envp = env;
	r.spawn.keep_fd = -1;
	r.timeout_s = 10;
	assert_int_equal(geak_run(&r), 0);
	assert_null(strstr(r.out, "sk-secret"));
	assert_null(strstr(r.out, "sk-set-by-mistake"));
	assert_null(strstr(r.out, "UNLISTED"));
	assert_non_null(strstr(r.out, "GEAKTEST_PLAIN=visible\n"));
	assert_non_null(strstr(r.out, "HOME=/nonexistent\n"));
	assert_non_null(strstr(r.out, "TRITON_INTERPRET=1\n"));
	assert_non_null(strstr(r.out, "PATH="));
	geak_run_free(&r);
	geak_env_free(env);
	assert_true(geak_env_is_secret("ANTHROPIC_API_KEY"));
	assert_true(geak_env_is_secret("hf_token"));
	assert_false(geak_env_is_secret("PATH"));
}

static void
test_limits(void **state)
{
	struct geak_run r;
	char *argv[] = { "/bin/sh", "-c",
		"head -c 100000 /dev/zero > big; echo rc=$?; wc -c < big; ulimit -n", NULL };
	char *dir = geak_mkworkdir(NULL, "geak-unit-");

	(void)state;
	assert_non_null(dir);
	memset(&r, 0, sizeof r);
	r.spawn.argv = argv;
	r.spawn.keep_fd = -1;
	r.spawn.cwd = dir;
	r.spawn.lim.fsize = 4096;
	r.spawn.lim.nofile = 64;
	r.timeout_s = 10;
	assert_int_equal(geak_run(&r), 0);
	assert_non_null(strstr(r.out, "4096\n64\n"));
	geak_run_free(&r);
	assert_int_equal(geak_rmtree(dir), 0);
	assert_int_equal(access(dir, F_OK), -1);
	free(dir);
}

static void
test_cpu_limit(void **state)
{
	struct geak_run r;
	char *argv[] = { "/bin/sh", "-c", "while :; do :; done", NULL };

	(void)state;
	memset(&r, 0, sizeof r);
	r.spawn.argv = argv;
	r.spawn.keep_fd = -1;
	r.spawn.lim.cpu_s = 1;
	r.timeout_s = 20;
	assert_int_equal(geak_run(&r), 0);
	assert_false(r.timed_out);
	assert_true(r.signaled);
	assert_true(r.sig == SIGXCPU || r.sig == SIGKILL);
	geak_run_free(&r);
}

static void
test_exec_failure(void **state)
{
	struct geak_run r;
	char *argv[] = { "/nonexistent/program", NULL };

	(void)state;
	memset(&r, 0, sizeof r);
	r.spawn.argv = argv;
	r.spawn.keep_fd = -1;
	assert_int_equal(geak_run(&r), -1);
	assert_false(r.started);
	assert_non_null(strstr(r.errmsg, "/nonexistent/program"));
	assert_non_null(strstr(r.errmsg, "No such file"));
}

/* The write sandbox: writes inside the work directory succeed, writes
 * elsewhere fail; a process's own /proc entries are written where the
 * user is not root.  Skipped where the kernel has no Landlock. */
static void
test_write_sandbox(void **state)
{
	struct geak_run r;
	char *dir = geak_mkworkdir(NULL, "geak-unit-");
	char *outside = geak_mkworkdir(NULL, "geak-unit-out-");
	char *script = geak_xasprintf("echo in > inside && echo yes; "
	    "echo out > %s/escaped 2>/dev/null && echo escaped || echo blocked; "
	    "(echo geak-unit > /proc/self/comm) 2>/dev/null && echo named || echo unnamed", outside);
	char *argv[] = { "/bin/sh", "-c", script, NULL };
	const char *const dirs[] = { dir, "/dev", NULL };
	struct geak_sandbox sb = { .layers = GEAK_SB_FSWRITE | GEAK_SB_NONET, .write_dirs = dirs };

	(void)state;
	memset(&r, 0, sizeof r);
	r.spawn.argv = argv;
	r.spawn.keep_fd = -1;
	r.spawn.cwd = dir;
	geak_sandbox_spawn(&r.spawn, &sb);
	r.timeout_s = 10;
	assert_int_equal(geak_run(&r), 0);
	if (!(r.sandbox & GEAK_SB_FSWRITE)) {
		geak_run_free(&r);
		skip();
	}
	assert_string_equal(r.out, geteuid() == 0 ? "yes\nblocked\nunnamed\n" : "yes\nblocked\nnamed\n");
	geak_run_free(&r);
	geak_rmtree(dir);
	geak_rmtree(outside);
	free(dir), free(outside), free(script);
}

static void
test_no_network(void **state)
{
	struct geak_run r;
	char *argv[] = { "/bin/sh", "-c", "cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' '", NULL };
	struct geak_sandbox sb = { .layers = GEAK_SB_NONET };

	(void)state;
	memset(&r, 0, sizeof r);
	r.spawn.argv = argv;
	r.spawn.keep_fd = -1;
	geak_sandbox_spawn(&r.spawn, &sb);
	r.timeout_s = 10;
	assert_int_equal(geak_run(&r), 0);
	if (!(r.sandbox & GEAK_SB_NONET)) {
		geak_run_free(&r);
		skip();
	}
	/* A fresh network namespace holds only the loopback device. */
	assert_string_equal(r.out, "lo\n");
	geak_run_free(&r);
}

/* A PID namespace: the program is its first process, sees only its
 * own, and what it leaves running ends with it. */
static void
test_pid_namespace(void **state)
{
	struct geak_run r;
	char *argv[] = { "/bin/sh", "-c", "echo $$; setsid sleep 31339.5 & ls /proc | grep -c '^[0-9]'", NULL };
	struct geak_sandbox sb = { .layers = GEAK_SB_PID | GEAK_SB_IPC };

	(void)state;
	memset(&r, 0, sizeof r);
	r.spawn.argv = argv;
	r.spawn.keep_fd = -1;
	geak_sandbox_spawn(&r.spawn, &sb);
	r.timeout_s = 10;
	assert_int_equal(geak_run(&r), 0);
	if (!(r.sandbox & GEAK_SB_PID)) {
		geak_run_free(&r);
		skip();
	}
	assert_int_equal(pid_from(r.out), 1);
	assert_true(atoi(strchr(r.out, '\n') + 1) <= 4);
	geak_run_free(&r);
	sh(&r, "ps -eo args | grep -c '^sleep 31339.5'", 10);
	assert_string_equal(r.out, "0\n");
	geak_run_free(&r);
}

/* A private root: the system read-only, the directory listed as written
 * written, the rest of the host absent, /tmp its own. */
static void
test_view(void **state)
{
	struct geak_run r;
	struct geak_view v;
	char *run = geak_mkworkdir(NULL, "geak-unit-");
	char *outside = geak_mkworkdir(NULL, "geak-unit-out-");
	char *stage = geak_xasprintf("%s/.root", run), *work = geak_xasprintf("%s/work", run);
	char *tmpname = geak_xasprintf("/tmp/geak-unit-view-%ld", (long)getpid());
	char *script = geak_xasprintf("touch /usr/x 2>/dev/null || echo ro; echo w > %s/w && echo rw; "
	    "test -e %s && echo seen || echo hidden; touch %s && echo tmp; cat /etc/passwd", work, outside,
	    tmpname);
	char *argv[] = { "/bin/sh", "-c", script, NULL };
	const char *const rw[] = { work, NULL };
	struct geak_view_spec sp = { .stage = stage, .rw = rw, .passwd = "root:x:0:0:r:/:/bin/false\n" };
	struct geak_sandbox sb = { .layers = GEAK_SB_PID | GEAK_SB_VIEW };
	struct stat st;
	int applied;

	(void)state;
	assert_int_equal(mkdir(stage, 0700), 0);
	assert_int_equal(mkdir(work, 0700), 0);
	geak_view_make(&v, &sp);
	memset(&r, 0, sizeof r);
	r.spawn.argv = argv;
	r.spawn.keep_fd = -1;
	r.spawn.cwd = work;
	sb.view = &v;
	geak_sandbox_spawn(&r.spawn, &sb);
	r.timeout_s = 10;
	assert_int_equal(geak_run(&r), 0);
	geak_view_free(&v);
	applied = (r.sandbox & GEAK_SB_VIEW) != 0;
	if (applied) {
		assert_string_equal(r.out, "ro\nrw\nhidden\ntmp\nroot:x:0:0:r:/:/bin/false\n");
		assert_int_equal(stat(tmpname, &st), -1);
		assert_int_equal(errno, ENOENT);
	}
	unlink(tmpname); /* where the view was not made, the host's */
	geak_run_free(&r);
	geak_rmtree(run);
	geak_rmtree(outside);
	free(run), free(outside), free(stage), free(work), free(tmpname), free(script);
	if (!applied)
		skip();
}

static void
put_file(const char *path, const char *text, mode_t mode)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	assert_true(fputs(text, fp) >= 0);
	assert_int_equal(fclose(fp), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/* geak_which: the first executable regular file of the name in PATH. */
static void
test_which(void **state)
{
	char dir[] = "/tmp/geak-which-XXXXXX", *a, *b, *found;
	const char *saved = getenv("PATH");
	char *keep = saved ? strdup(saved) : NULL;

	assert_non_null(mkdtemp(dir));
	a = geak_xasprintf("%s/a", dir);
	b = geak_xasprintf("%s/b", dir);
	assert_int_equal(mkdir(a, 0700), 0);
	assert_int_equal(mkdir(b, 0700), 0);
	char *plain = geak_xasprintf("%s/tool", a), *exe = geak_xasprintf("%s/tool", b);
	char *sub = geak_xasprintf("%s/b/sub", dir);
	(void)state;
	put_file(plain, "not executable\n", 0600);
	put_file(exe, "#!/bin/sh\n", 0700);
	assert_int_equal(mkdir(sub, 0700), 0); /* a directory is not a program */
	char *path = geak_xasprintf("%s:%s", a, b);
	setenv("PATH", path, 1);
	found = geak_which("tool");
	assert_non_null(found);
	assert_string_equal(found, exe); /* past the one that is not executable */
	free(found);
	assert_null(geak_which("sub"));
	assert_null(geak_which("no-such-tool"));
	found = geak_which(exe); /* a name with a slash is taken as it is */
	assert_string_equal(found, exe);
	free(found);
	assert_null(geak_which(plain));
	if (keep)
		setenv("PATH", keep, 1);
	free(keep), free(path), free(sub), free(plain), free(exe), free(a), free(b);
	geak_rmtree(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_which),
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_timeout_kills_tree_ignoring_term),
		cmocka_unit_test(test_orphan_grandchild_reaped),
		cmocka_unit_test(test_output_flood),
		cmocka_unit_test(test_flood_then_timeout),
		cmocka_unit_test(test_env_scrubbed),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_cpu_limit),
		cmocka_unit_test(test_exec_failure),
		cmocka_unit_test(test_write_sandbox),
		cmocka_unit_test(test_no_network),
		cmocka_unit_test(test_pid_namespace),
		cmocka_unit_test(test_view),
	};
	return cmocka_run_group_tests_name("runner", tests, NULL, NULL);
}
