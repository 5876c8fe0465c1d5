/* llmledger.c: --ledger, the spending of every process that shares one
 * file, so that a budget holds for a whole run (a loop's steps, parallel
 * runs, a run stopped and resumed) and not for one process.
 *
 * The file is one JSON line, {"calls", "input_tokens", "output_tokens",
 * "cost", "unpriced_calls"}, rewritten under an exclusive flock(2) by each answer that
 * came from the provider, and read under a shared one before each
 * request is sent.  Answers from --replay or --journal were paid for when
 * they were first received, and add nothing.  The file is made by the
 * first answer: a run that asked nothing leaves none.  "cost" sums the
 * calls the price table has a price for; "unpriced_calls" counts the
 * others, whose tokens are counted and whose cost is unknown (never
 * another model's price). */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>

#include "llm/llmint.h"

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
	t->unpriced_calls = (long)json_integer_value(json_object_get(doc, "unpriced_calls"));
	json_decref(doc);
	return 0;
}

static int
store(int fd, const struct geak_llm_totals *t)
{
	char buf[LEDGER_MAX];
	int n = snprintf(buf, sizeof buf, "{\"calls\":%ld,\"input_tokens\":%ld,"
	    "\"output_tokens\":%ld,\"cost\":%.6f,\"unpriced_calls\":%ld}\n", t->calls,
	    t->input_tokens, t->output_tokens, t->cost, t->unpriced_calls);

	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		return -1;
	return 0;
}

/* The file, opened once it exists (or, with create, made). */
static int
ledger_fd(struct geak_llm *llm, int create)
{
	if (llm->ledger_fd < 0)
		llm->ledger_fd = open(llm->cfg.ledger_path, O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0),
		    0644);
	return llm->ledger_fd;
}

int
geak_llm_ledger_read(struct geak_llm *llm, struct geak_llm_totals *t)
{
	int fd = ledger_fd(llm, 0), r;

	memset(t, 0, sizeof *t);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	if (flock(fd, LOCK_SH) < 0)
		return -1;
	r = load(fd, t);
	flock(fd, LOCK_UN);
	return r;
}

int
geak_llm_ledger_open(struct geak_llm *llm, const char *path)
{
	struct geak_llm_totals t;

	errno = 0;
	if (geak_llm_ledger_read(llm, &t) == 0)
		return 0;
	if (errno)
		geak_warn("--ledger %s:", path);
	else
		geak_warn("--ledger %s: not a ledger (want one line of JSON with calls, "
		    "input_tokens, output_tokens and cost)", path);
	return -1;
}

int
geak_llm_ledger_add(struct geak_llm *llm, const struct geak_llm_usage *u, double cost,
    int priced)
{
	struct geak_llm_totals t;
	int r;

	int fd = ledger_fd(llm, 1);

	errno = 0;
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		geak_warn("--ledger %s: cannot add a call:", llm->cfg.ledger_path);
		return -1;
	}
	r = load(fd, &t);
	if (r == 0) {
		t.calls++;
		t.input_tokens += u->input_tokens;
		t.output_tokens += u->output_tokens;
		if (priced)
			t.cost += cost;
		else
			t.unpriced_calls++;
		r = store(fd, &t);
	}
	flock(fd, LOCK_UN);
	if (r < 0)
		geak_warn("--ledger %s: cannot add a call: %s", llm->cfg.ledger_path,
		    errno ? strerror(errno) : "not a ledger");
	return r;
}
