/* secrets.c: credential-named variables taken out of the environment at
 * start, and their values redacted from captured output by fingerprint.
 *
 * A value is found by a rolling sum of its bytes over a window of its
 * length; where the sum matches, the window's salted SHA-256 decides.
 * The sum tells about 14 bits of the value and the digest nothing usable,
 * so the process never holds a credential it could give away. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "secrets.h"
#include "util.h"

extern char **environ;

/* Shorter values ("1", "true") are too common in output to redact. */
#define MIN_LEN 8
#define MAX_PRINTS 64

struct print {
	size_t len;
	uint32_t sum;        /* of the value's bytes */
	char digest[65];     /* SHA-256 of salt || value, hex */
	char name[48];       /* the variable's, for the mark */
};

static struct print prints[MAX_PRINTS];
static size_t nprints;
static unsigned char salt[16];

static void
salted_digest(const unsigned char *p, size_t len, char out[65])
{
	unsigned char *buf = geak_xmalloc(sizeof salt + len);

	memcpy(buf, salt, sizeof salt);
	memcpy(buf + sizeof salt, p, len);
	geak_sha256_hex(buf, sizeof salt + len, out);
	explicit_bzero(buf, sizeof salt + len);
	free(buf);
}

static uint32_t
byte_sum(const unsigned char *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum += p[i];
	return sum;
}

static void
remember(const char *entry, const char *eq)
{
	const unsigned char *value = (const unsigned char *)eq + 1;
	size_t len = strlen((const char *)value), nl = (size_t)(eq - entry);
	struct print *p;

	if (len < MIN_LEN || nprints == MAX_PRINTS)
		return;
	for (size_t i = 0; i < nprints; i++)
		if (prints[i].len == len && prints[i].sum == byte_sum(value, len)) {
			char d[65];
			salted_digest(value, len, d);
			if (!strcmp(d, prints[i].digest))
				return; /* one value under two names */
		}
	p = &prints[nprints++];
	p->len = len;
	p->sum = byte_sum(value, len);
	salted_digest(value, len, p->digest);
	if (nl >= sizeof p->name)
		nl = sizeof p->name - 1;
	memcpy(p->name, entry, nl);
	p->name[nl] = '\0';
}

static void
salt_once(void)
{
	static int salted;

	if (salted)
		return;
	if (getrandom(salt, sizeof salt, 0) != (ssize_t)sizeof salt)
		geak_die(GEAK_EXIT_FATAL, "getrandom:");
	salted = 1;
	geak_warn_filter(geak_redact);
}

void
geak_secrets_hold(const char *name, const char *value)
{
	char *entry = geak_xasprintf("%s=%s", name, value);

	salt_once();
	remember(entry, entry + strlen(name));
	explicit_bzero(entry, strlen(entry));
	free(entry);
}

/* ---- the names of credentials ---- */

/* The rule's one copy is share/harness/secret-marks, which the harness
 * reads too; the build makes secretmarks.h of it. */
const char *const geak_secret_marks[] = {
#include "secretmarks.h"
	NULL,
};

int
geak_env_is_secret(const char *name)
{
	char up[256];
	size_t i;

	for (i = 0; name[i] && name[i] != '=' && i < sizeof up - 1; i++)
		up[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
	up[i] = '\0';
	for (const char *const *m = geak_secret_marks; *m; m++)
		if (strstr(up, *m))
			return 1;
	return 0;
}

void
geak_secrets_take(void)
{
	size_t keep = 0;

	salt_once();
	for (size_t i = 0; environ && environ[i]; i++) {
		char *entry = environ[i], *eq = strchr(entry, '=');
		if (!eq || !geak_env_is_secret(entry)) {
			environ[keep++] = entry;
			continue;
		}
		remember(entry, eq);
		/* The strings of the initial environment are what
		 * /proc/PID/environ shows: dropping the pointer is not enough. */
		explicit_bzero(entry, strlen(entry));
	}
	if (environ)
		environ[keep] = NULL;
}

size_t
geak_secrets_count(void)
{
	return nprints;
}

static int
window_is(const unsigned char *w, const struct print *p)
{
	char d[65];

	salted_digest(w, p->len, d);
	return !strcmp(d, p->digest);
}

static size_t
redact_one(char **sp, const struct print *p)
{
	const unsigned char *s = (const unsigned char *)*sp;
	size_t n = strlen(*sp), hits = 0, from = 0, i = 0;
	struct geak_buf out = {0};
	uint32_t sum;

	if (n < p->len)
		return 0;
	sum = byte_sum(s, p->len);
	for (;;) {
		if (sum == p->sum && window_is(s + i, p)) {
			geak_buf_append(&out, s + from, i - from);
			geak_buf_printf(&out, GEAK_REDACTED "%s]", p->name);
			hits++;
			from = i += p->len;
			if (i + p->len > n)
				break;
			sum = byte_sum(s + i, p->len);
			continue;
		}
		if (i + p->len >= n)
			break;
		sum += (uint32_t)s[i + p->len] - s[i];
		i++;
	}
	if (!hits)
		return 0;
	geak_buf_append(&out, s + from, n - from);
	free(*sp);
	*sp = geak_buf_steal(&out);
	return hits;
}

size_t
geak_redact(char **sp)
{
	size_t hits = 0;

	for (size_t k = 0; k < nprints && *sp; k++)
		hits += redact_one(sp, &prints[k]);
	return hits;
}

size_t
geak_redact_json(json_t *v)
{
	size_t hits = 0, i;
	const char *key;
	json_t *x;

	if (!nprints)
		return 0;
	if (json_is_string(v)) {
		char *s = geak_xstrdup(json_string_value(v));
		hits = geak_redact(&s);
		if (hits && json_string_set(v, s) < 0)
			geak_die(GEAK_EXIT_FATAL, "json: out of memory");
		free(s);
	} else if (json_is_object(v)) {
		json_object_foreach(v, key, x)
			hits += geak_redact_json(x);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			hits += geak_redact_json(x);
	}
	return hits;
}

size_t
geak_redacted_marks(const char *s)
{
	size_t n = 0;

	for (; s && (s = strstr(s, GEAK_REDACTED)); s += sizeof GEAK_REDACTED - 1)
		n++;
	return n;
}
