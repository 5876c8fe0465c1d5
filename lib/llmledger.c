/* llmledger.c: --ledger, the spending of every process that shares one
 * file, so that a budget holds for a whole run (a loop's steps, parallel
 * runs, a run stopped and resumed) and not for one process.
 *
 * The file is one JSON line, {"calls", "input_tokens", "output_tokens",
 * "cost"}, rewritten under an exclusive flock(2) by each answer that
 * came from the provider, and read under a shared one before each
 * request is sent.  Answers from --replay or --journal were paid for when
 * they were first received, and add nothing. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>

#include "llmint.h"

#define LEDGER_MAX 4096 /* one short line */

/* Under the file's lock: what it holds; -1 when it is not a ledger. */
static int
load(int fd, struct geak_llm_totals *t)
{
	char buf[LEDGER_MAX + 1];
	ssize_t n = pread(fd, buf, LEDGER_MAX, 0);
	json_t *doc;

	memset(t, 0, sizeof *t);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	if (strspn(buf, " \t\r\n") == (size_t)n)
		return 0; /* new: nothing spent */
	doc = json_loads(buf, 0, NULL);
	if (!json_is_object(doc)) {
		json_decref(doc);
		return -1;
	}
	t->calls = (long)json_integer_value(json_object_get(doc, "calls"));
	t->input_tokens = (long)json_integer_value(json_object_get(doc, "input_tokens"));
	t->output_tokens = (long)json_integer_value(json_object_get(doc, "output_tokens"));
	t->cost = json_number_value(json_object_get(doc, "cost"));
	json_decref(doc);
	return 0;
}

static int
store(int fd, const struct geak_llm_totals *t)
{
	char buf[LEDGER_MAX];
	int n = snprintf(buf, sizeof buf, "{\"calls\":%ld,\"input_tokens\":%ld,"
	    "\"output_tokens\":%ld,\"cost\":%.6f}\n", t->calls, t->input_tokens,
	    t->output_tokens, t->cost);

	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		return -1;
	return 0;
}

int
geak_llm_ledger_open(struct geak_llm *llm, const char *path)
{
	struct geak_llm_totals t;
	int r;

	llm->ledger_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (llm->ledger_fd < 0) {
		geak_warn("--ledger %s:", path);
		return -1;
	}
	r = geak_llm_ledger_read(llm, &t);
	if (r < 0) {
		geak_warn("--ledger %s: not a ledger (want one line of JSON with calls, "
		    "input_tokens, output_tokens and cost)", path);
		return -1;
	}
	return 0;
}

int
geak_llm_ledger_read(struct geak_llm *llm, struct geak_llm_totals *t)
{
	int r;

	if (flock(llm->ledger_fd, LOCK_SH) < 0)
		return -1;
	r = load(llm->ledger_fd, t);
	flock(llm->ledger_fd, LOCK_UN);
	return r;
}

int
geak_llm_ledger_add(struct geak_llm *llm, const struct geak_llm_usage *u, double cost)
{
	struct geak_llm_totals t;
	int r;

	errno = 0;
	if (flock(llm->ledger_fd, LOCK_EX) < 0) {
		geak_warn("--ledger %s: cannot lock it:", llm->cfg.ledger_path);
		return -1;
	}
	r = load(llm->ledger_fd, &t);
	if (r == 0) {
		t.calls++;
		t.input_tokens += u->input_tokens;
		t.output_tokens += u->output_tokens;
		t.cost += cost;
		r = store(llm->ledger_fd, &t);
	}
	flock(llm->ledger_fd, LOCK_UN);
	if (r < 0)
		geak_warn("--ledger %s: cannot add a call: %s", llm->cfg.ledger_path,
		    errno ? strerror(errno) : "not a ledger");
	return r;
}
