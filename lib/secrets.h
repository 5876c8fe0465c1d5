/* secrets.h: the credentials a tool was started with, kept only as
 * fingerprints, and their redaction from text it passes on.
 *
 * geak_secrets_take, first thing in main, removes every variable whose
 * name looks like a credential (geak_env_is_secret) from the environment
 * and overwrites its bytes where the kernel shows them
 * (/proc/PID/environ).  What stays is, per value of 8 bytes or more, its
 * length, the sum of its bytes and a salted SHA-256: enough to recognise
 * the value in output, not enough to recover it. */
#ifndef GEAK_SECRETS_H
#define GEAK_SECRETS_H

#include <jansson.h>
#include <stddef.h>

/* What a redacted value becomes: "[redacted:NAME]". */
#define GEAK_REDACTED "[redacted:"

/* A variable's name (or a "NAME=value" entry) that looks like a
 * credential: one holding any of geak_secret_marks (NULL-terminated),
 * case aside: the marks of share/harness/secret-marks, which the
 * harness checks its jobs' environment by (geakh/sandbox.py). */
extern const char *const geak_secret_marks[];
int geak_env_is_secret(const char *name);

void geak_secrets_take(void);
/* Fingerprint a credential the tool keeps and uses (an API key, named by
 * its variable), so that geak_redact finds it in what a server sends
 * back.  Both this and geak_secrets_take make every message printed by
 * geak_warn pass through geak_redact. */
void geak_secrets_hold(const char *name, const char *value);
/* Values fingerprinted (of 8 bytes or more). */
size_t geak_secrets_count(void);
/* Replace every occurrence of a fingerprinted value in the heap string
 * *s (reallocated as needed); the number replaced. */
size_t geak_redact(char **s);
/* The same for every string in v, recursively (keys are left alone). */
size_t geak_redact_json(json_t *v);
/* Redaction marks in s: what an earlier geak_redact left. */
size_t geak_redacted_marks(const char *s);

#endif
