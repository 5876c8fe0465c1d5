/* evalcalib.c: the references' calibrations as an archive.
 *
 * An export holds, per profile (cache/profile/KEY), its spec (spec.json:
 * the task, the device, the harness and library versions), profile.json,
 * the autotuner choices of its first timing (pins.json) and the masks of
 * where the reference disagrees with itself (masks.pt); not its canonical
 * outputs (profile.pt), which are large and are made again by one run of
 * the reference the first time a candidate of the task needs them
 * (geakh/regen.py), and held there to the sums the calibration recorded.
 *
 * An archive to import comes from elsewhere: every member is checked
 * (its path, its type, its size, its name) as it is read into a folder
 * of our own beside the cache's profiles, the whole archive refused at
 * the first that fails; then each profile's JSON is checked, its spec
 * against its folder's name and against this machine's device and
 * harness, and what passes is renamed into the cache whole.
 *
 * libarchive is loaded when an archive is read or written: geak-eval
 * itself runs where it is not installed. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <archive.h>
#include <archive_entry.h>

#include "eval/evalcache.h"
#include "eval/evalcalib.h"
#include "eval/evalprofile.h"
#include "eval/harness.h"
#include "record.h"
#include "runner.h"
#include "util.h"


#define ARCHIVE_SONAME "libarchive.so.13"
#define FORMAT "geak-calibration 1"
#define MANIFEST "calibration.json"
#define KEYLEN 64

/* What an archive may hold: a JSON file is kilobytes (a profile of many
 * seeds and cases, a few MiB at most), masks are a byte per element of
 * the outputs where the reference races, compressed in the archive. */
#define JSON_CAP (16ull << 20)
#define MASKS_CAP (1ull << 30)
#define TOTAL_CAP (8ull << 30)
#define PROFILES_CAP 100000


/* ---- libarchive, loaded at run time ---- */

/* POSIX guarantees that a data pointer from dlsym converts to a function
 * pointer this way. */
#define LOAD(lib, var, name) (*(void **)(&(var)) = dlsym((lib), (name)))

static struct {
	__typeof__(archive_read_new) *read_new;
	__typeof__(archive_read_support_filter_gzip) *read_filter_gzip;
	__typeof__(archive_read_support_format_tar) *read_format_tar;
	__typeof__(archive_read_open_filename) *read_open;
	__typeof__(archive_read_next_header) *read_next;
	__typeof__(archive_read_data) *read_data;
	__typeof__(archive_read_free) *read_free;
	__typeof__(archive_write_new) *write_new;
	__typeof__(archive_write_add_filter_gzip) *write_filter_gzip;
	__typeof__(archive_write_set_format_pax_restricted) *write_format;
	__typeof__(archive_write_open_filename) *write_open;
	__typeof__(archive_write_header) *write_header;
	__typeof__(archive_write_data) *write_data;
	__typeof__(archive_write_close) *write_close;
	__typeof__(archive_write_free) *write_free;
	__typeof__(archive_error_string) *error_string;
	__typeof__(archive_entry_new) *entry_new;
	__typeof__(archive_entry_free) *entry_free;
	__typeof__(archive_entry_pathname) *entry_pathname;
	__typeof__(archive_entry_filetype) *entry_filetype;
	__typeof__(archive_entry_hardlink) *entry_hardlink;
	__typeof__(archive_entry_size) *entry_size;
	__typeof__(archive_entry_size_is_set) *entry_size_is_set;
	__typeof__(archive_entry_set_pathname) *entry_set_pathname;
	__typeof__(archive_entry_set_size) *entry_set_size;
	__typeof__(archive_entry_set_filetype) *entry_set_filetype;
	__typeof__(archive_entry_set_perm) *entry_set_perm;
	__typeof__(archive_entry_set_mtime) *entry_set_mtime;
} la;

/* 0, or -1 with why set: not installed, or not the library we know. */
static int
load_libarchive(char *why, size_t n)
{
	static void *lib;
	struct { void **var; const char *name; } syms[] = {
#define SYM(f, s) { (void **)&la.f, s }
		SYM(read_new, "archive_read_new"),
		SYM(read_filter_gzip, "archive_read_support_filter_gzip"),
		SYM(read_format_tar, "archive_read_support_format_tar"),
		SYM(read_open, "archive_read_open_filename"),
		SYM(read_next, "archive_read_next_header"),
		SYM(read_data, "archive_read_data"), SYM(read_free, "archive_read_free"),
		SYM(write_new, "archive_write_new"),
		SYM(write_filter_gzip, "archive_write_add_filter_gzip"),
		SYM(write_format, "archive_write_set_format_pax_restricted"),
		SYM(write_open, "archive_write_open_filename"),
		SYM(write_header, "archive_write_header"), SYM(write_data, "archive_write_data"),
		SYM(write_close, "archive_write_close"), SYM(write_free, "archive_write_free"),
		SYM(error_string, "archive_error_string"),
		SYM(entry_new, "archive_entry_new"), SYM(entry_free, "archive_entry_free"),
		SYM(entry_pathname, "archive_entry_pathname"),
		SYM(entry_filetype, "archive_entry_filetype"),
		SYM(entry_hardlink, "archive_entry_hardlink"),
		SYM(entry_size, "archive_entry_size"),
		SYM(entry_size_is_set, "archive_entry_size_is_set"),
		SYM(entry_set_pathname, "archive_entry_set_pathname"),
		SYM(entry_set_size, "archive_entry_set_size"),
		SYM(entry_set_filetype, "archive_entry_set_filetype"),
		SYM(entry_set_perm, "archive_entry_set_perm"),
		SYM(entry_set_mtime, "archive_entry_set_mtime"),
#undef SYM
	};

	if (!lib && !(lib = dlopen(ARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(why, n, "%s not found: install libarchive13", ARCHIVE_SONAME);
		return -1;
	}
	for (size_t i = 0; i < sizeof syms / sizeof *syms; i++)
		if (!(*syms[i].var = dlsym(lib, syms[i].name))) {
			snprintf(why, n, "%s has no %s: install libarchive 3", ARCHIVE_SONAME, syms[i].name);
			return -1;
		}
	return 0;
}

static const char *
la_why(struct archive *a)
{
	const char *s = la.error_string(a);

	return s ? s : "unknown error";
}

/* ---- the files of a profile ---- */

enum { F_SPEC, F_PROFILE, F_PINS, F_MASKS, NFILES };
static const char *const member_names[NFILES] = {
	GEAK_FILE_SPEC, GEAK_FILE_PROFILE, "pins.json", GEAK_FILE_MASKS,
};
static const unsigned long long member_caps[NFILES] = { JSON_CAP, JSON_CAP, JSON_CAP, MASKS_CAP };

static int
is_key(const char *s, size_t n)
{
	if (n != KEYLEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* The task a spec names, for messages: "suite/name". */
static char *
task_of(json_t *spec)
{
	const char *suite = geak_get_str(spec, GEAK_JOB_SUITE), *name = geak_get_str(spec, GEAK_JOB_NAME);
	char *raw = geak_xasprintf("%s/%s", suite ? suite : "?", name ? name : "?");
	char *out = geak_printable(raw);

	free(raw);
	return out;
}

/* ---- checks of a profile from elsewhere ---- */

static int
is_int_array(json_t *a)
{
	json_t *v;
	size_t i;

	if (!json_is_array(a))
		return 0;
	json_array_foreach(a, i, v)
		if (!json_is_integer(v))
			return 0;
	return 1;
}

static int
all_objects(json_t *a, const char *key, int (*is)(const json_t *))
{
	json_t *v;
	size_t i;

	if (!json_is_array(a))
		return 0;
	json_array_foreach(a, i, v)
		if (!json_is_object(v) || !is(json_object_get(v, key)))
			return 0;
	return 1;
}

static int is_integer(const json_t *v) { return json_is_integer(v); }
static int is_string(const json_t *v) { return json_is_string(v); }

/* A field of profile.json that is not as the harness writes it: its
 * name, or NULL. */
static const char *
bad_profile_field(json_t *prof, json_t *spec, int has_masks)
{
	json_t *tol = json_object_get(prof, GEAK_PROF_TOLERANCE), *sums = json_object_get(prof, GEAK_PROF_CANON_SUMS);
	json_t *mib = json_object_get(prof, GEAK_PROF_GPU_MIB), *plan = json_object_get(prof, GEAK_PROF_CANDIDATE_PLAN);

	if (!json_is_object(prof))
		return "(the whole file: not an object)";
	if (!json_is_boolean(json_object_get(prof, GEAK_PROF_OK)))
		return "ok";
	if (!json_is_true(json_object_get(prof, GEAK_PROF_OK))) {
		/* Only a reference that fails by itself is kept failed. */
		if (!json_is_string(json_object_get(prof, GEAK_PROF_KIND)) ||
		    strcmp(geak_get_str(prof, GEAK_PROF_KIND), "reference"))
			return "kind";
		return json_is_string(json_object_get(prof, GEAK_PROF_ERROR)) ? NULL : "error";
	}
	if (!json_is_string(json_object_get(prof, GEAK_PROF_SUITE)) ||
	    !json_equal(json_object_get(prof, GEAK_PROF_SUITE), json_object_get(spec, GEAK_JOB_SUITE)))
		return "suite";
	if (!all_objects(json_object_get(prof, GEAK_PROF_SEEDS), "seed", is_integer) ||
	    !json_array_size(json_object_get(prof, GEAK_PROF_SEEDS)))
		return "seeds";
	if (!all_objects(json_object_get(prof, GEAK_PROF_CASES), "key", is_string))
		return "cases";
	if (!json_is_object(plan) || !is_int_array(json_object_get(plan, GEAK_PLAN_RUNS)) ||
	    !json_array_size(json_object_get(plan, GEAK_PLAN_RUNS)))
		return "candidate_plan";
	if (!json_is_array(tol) || json_array_size(tol) != 2 || !json_is_number(json_array_get(tol, 0)) ||
	    !json_is_number(json_array_get(tol, 1)))
		return "tolerance";
	if (!json_is_boolean(json_object_get(prof, GEAK_PROF_POISON)))
		return "poison";
	if (!json_is_boolean(json_object_get(prof, GEAK_PROF_ONE_CALL)))
		return "one_call";
	if (!json_is_array(json_object_get(prof, GEAK_PROF_TUNINGS)))
		return "tunings";
	if (!json_is_integer(mib) || json_integer_value(mib) < 0)
		return "gpu_mib";
	if (!json_is_object(sums) || !json_is_object(json_object_get(sums, "seeds")) ||
	    !json_is_object(json_object_get(sums, "cases")))
		return "canon_sums";
	if (!has_masks)
		return "(masks.pt: missing)";
	return NULL;
}

static const char *
bad_pins(json_t *pins)
{
	const char *k;
	json_t *v;

	if (!json_is_object(pins))
		return "(the whole file: not an object)";
	json_object_foreach(pins, k, v)
		if (!json_is_array(v))
			return k;
	return NULL;
}

/* Where an archive's value (theirs) differs from this machine's (ours)
 * under the name at, into why: the first field, at most one level down. */
static int
differs(const char *at, json_t *theirs, json_t *ours, char *why, size_t n)
{
	const char *k;
	json_t *v;
	char *a, *b, *pa, *pb;

	if (json_equal(theirs, ours))
		return 0;
	if (json_is_object(theirs) && json_is_object(ours)) {
		json_object_foreach(ours, k, v)
			if (!json_equal(v, json_object_get(theirs, k))) {
				char *sub = geak_xasprintf("%s.%s", at, k);
				int r = differs(sub, json_object_get(theirs, k), v, why, n);
				free(sub);
				return r;
			}
		json_object_foreach(theirs, k, v)
			if (!json_object_get(ours, k)) {
				char *sub = geak_xasprintf("%s.%s", at, k);
				int r = differs(sub, v, NULL, why, n);
				free(sub);
				return r;
			}
	}
	a = theirs ? json_dumps(theirs, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	b = ours ? json_dumps(ours, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
	pa = geak_printable(a ? a : "(none)");
	pb = geak_printable(b ? b : "(none)");
	snprintf(why, n, "%s differs: the archive's %.200s, here %.200s", at, pa, pb);
	free(a), free(b), free(pa), free(pb);
	return 1;
}

static json_t *
load_json(const char *dir, const char *name, char *why, size_t n)
{
	size_t len;
	json_error_t e;
	char *s = geak_read_untrusted(dir, name, JSON_CAP, &len);
	json_t *v;

	if (!s) {
		snprintf(why, n, "%s: %s", name, errno == ENOENT ? "missing" : geak_untrusted_why(errno));
		return NULL;
	}
	v = json_loadb(s, len, JSON_REJECT_DUPLICATES, &e);
	free(s);
	if (!v)
		snprintf(why, n, "%s: line %d: %s", name, e.line, e.text);
	return v;
}

/* Rewrite dir/name as the value v (what was checked is what is kept). */
static int
rewrite_json(const char *dir, const char *name, json_t *v)
{
	char *path = geak_xasprintf("%s/%s", dir, name), *tmp = geak_xasprintf("%s.tmp", path);
	int r = json_dump_file(v, tmp, JSON_COMPACT) == 0 && rename(tmp, path) == 0 ? 0 : -1;

	if (r < 0)
		unlink(tmp);
	free(path), free(tmp);
	return r;
}

/* One staged profile (dir, named key) checked against this machine's
 * greeting; NULL, or why it is refused (a static buffer of the caller's). */
static const char *
check_profile(const char *dir, const char *key, json_t *hello, json_t **specp, char *why, size_t n)
{
	json_t *spec, *prof, *pins = NULL;
	char got[65], sub[512];
	const char *bad;
	struct stat st;
	char *masks = geak_xasprintf("%s/%s", dir, GEAK_FILE_MASKS);
	int has_masks = lstat(masks, &st) == 0;

	free(masks);
	*specp = NULL;
	if (!(spec = load_json(dir, GEAK_FILE_SPEC, why, n)))
		return why;
	*specp = spec;
	if (!json_is_object(spec) || !json_is_string(json_object_get(spec, GEAK_JOB_SUITE)) ||
	    !json_is_string(json_object_get(spec, GEAK_JOB_NAME)) || !json_is_string(json_object_get(spec, GEAK_JOB_CODE))) {
		snprintf(why, n, "spec.json: not a task's spec (suite, name, code)");
		return why;
	}
	geak_cache_key(spec, got);
	if (strcmp(got, key)) {
		snprintf(why, n, "spec.json: its digest %.12s is not its folder's name %.12s (altered)", got, key);
		return why;
	}
	if (differs("harness", json_object_get(spec, GEAK_JOB_HARNESS), json_object_get(hello, GEAK_HELLO_HARNESS), why, n) ||
	    differs("versions", json_object_get(spec, GEAK_JOB_VERSIONS), json_object_get(hello, GEAK_HELLO_VERSIONS), why, n) ||
	    differs("device", json_object_get(spec, GEAK_JOB_DEVICE), json_object_get(hello, GEAK_HELLO_DEVICE), why, n))
		return why;
	if (!(prof = load_json(dir, GEAK_FILE_PROFILE, why, n)))
		return why;
	if ((bad = bad_profile_field(prof, spec, has_masks))) {
		snprintf(sub, sizeof sub, "%s", bad);
		snprintf(why, n, "profile.json: field %s: not as the harness writes it", sub);
		json_decref(prof);
		return why;
	}
	if (json_is_true(json_object_get(prof, GEAK_PROF_OK)) == 0 && has_masks) {
		snprintf(why, n, "masks.pt: beside a failed profile");
		json_decref(prof);
		return why;
	}
	snprintf(sub, sizeof sub, "%s/pins.json", dir);
	if (lstat(sub, &st) == 0) {
		if ((pins = load_json(dir, "pins.json", why, n)) && (bad = bad_pins(pins)))
			snprintf(why, n, "pins.json: field %s: not a list", bad);
		if (!pins || bad) {
			json_decref(prof), json_decref(pins);
			return why;
		}
	}
	if (rewrite_json(dir, GEAK_FILE_SPEC, spec) < 0 || rewrite_json(dir, GEAK_FILE_PROFILE, prof) < 0 ||
	    (pins && rewrite_json(dir, "pins.json", pins) < 0)) {
		snprintf(why, n, "cannot write in %s: %s", dir, strerror(errno));
		json_decref(prof), json_decref(pins);
		return why;
	}
	json_decref(prof), json_decref(pins);
	return NULL;
}

/* ---- reading an archive ---- */

struct stage {
	const char *dir;          /* our folder the members go to */
	json_t *keys;             /* key -> true, in the order met */
	json_t *manifest;
	unsigned long long total;
};

/* Why a member's path or type is refused, or NULL; *file gets the file
 * index of KEY/NAME (key into key[65]), NFILES for the manifest, -1 for
 * a folder KEY/. */
static const char *
member_refused(const char *path, int type, const char *hardlink, char key[65], int *file)
{
	const char *slash, *p;

	if (!path || !*path)
		return "a member without a name";
	if (path[0] == '/')
		return "an absolute path";
	for (p = path; *p; p = slash + 1) {
		size_t len = (slash = strchr(p, '/')) ? (size_t)(slash - p) : strlen(p);
		if (len == 2 && !strncmp(p, "..", 2))
			return "a path that leaves the archive (..)";
		if (!slash)
			break;
	}
	if (hardlink || type == AE_IFLNK)
		return "a link";
	if (type == AE_IFCHR || type == AE_IFBLK || type == AE_IFIFO || type == AE_IFSOCK)
		return "a device file or other special file";
	if (type != AE_IFREG && type != AE_IFDIR)
		return "not a regular file";
	slash = strchr(path, '/');
	if (type == AE_IFDIR) {
		if (!slash || slash[1] || !is_key(path, (size_t)(slash - path)))
			return "a folder that is not a profile's";
		snprintf(key, 65, "%.*s", KEYLEN, path);
		*file = -1;
		return NULL;
	}
	if (!strcmp(path, MANIFEST)) {
		*file = NFILES;
		return NULL;
	}
	if (!slash || !is_key(path, (size_t)(slash - path)))
		return "not a file of a calibration archive";
	for (int f = 0; f < NFILES; f++)
		if (!strcmp(slash + 1, member_names[f])) {
			snprintf(key, 65, "%.*s", KEYLEN, path);
			*file = f;
			return NULL;
		}
	return "not a file of a calibration archive";
}

/* The member's data into dir/name (a new file), at most cap bytes and
 * what is left of the total; 0, or -1 with why set. */
static int
write_member(struct archive *a, struct stage *st, const char *dir, const char *name,
    unsigned long long cap, char *why, size_t n)
{
	char *path = geak_xasprintf("%s/%s", dir, name), buf[65536];
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600), r = 0;
	unsigned long long done = 0;
	la_ssize_t got;

	if (fd < 0) {
		snprintf(why, n, "%s", errno == EEXIST ? "it appears twice" : strerror(errno));
		free(path);
		return -1;
	}
	while ((got = la.read_data(a, buf, sizeof buf)) > 0) {
		done += (unsigned long long)got;
		st->total += (unsigned long long)got;
		if (done > cap || st->total > TOTAL_CAP) {
			snprintf(why, n, "larger than %llu MiB%s", (done > cap ? cap : TOTAL_CAP) >> 20,
			    done > cap ? "" : " (the archive's total)");
			r = -1;
			break;
		}
		if (geak_write_all(fd, buf, (size_t)got) < 0) {
			snprintf(why, n, "cannot write %s: %s", path, strerror(errno));
			r = -1;
			break;
		}
	}
	if (r == 0 && got < 0) {
		snprintf(why, n, "%s", la_why(a));
		r = -1;
	}
	if (close(fd) < 0 && r == 0) {
		snprintf(why, n, "cannot write %s: %s", path, strerror(errno));
		r = -1;
	}
	free(path);
	return r;
}

static int
stage_member(struct archive *a, struct archive_entry *e, struct stage *st, char *why, size_t n)
{
	char key[65] = "", reason[256], *dir;
	const char *path = la.entry_pathname(e), *refused;
	int file = 0, r;
	unsigned long long cap;

	refused = member_refused(path, (int)la.entry_filetype(e), la.entry_hardlink(e), key, &file);
	if (refused) {
		char *shown = geak_printable(path);
		snprintf(why, n, "member '%.200s': %s", shown, refused);
		free(shown);
		return -1;
	}
	if (file == -1)
		return 0;
	cap = file == NFILES ? JSON_CAP : member_caps[file];
	if (la.entry_size_is_set(e) && la.entry_size(e) > (la_int64_t)cap) {
		snprintf(why, n, "member '%s': larger than %llu MiB", path, cap >> 20);
		return -1;
	}
	if (file == NFILES)
		dir = geak_xstrdup(st->dir);
	else {
		if (!json_object_get(st->keys, key) && json_object_size(st->keys) >= PROFILES_CAP) {
			snprintf(why, n, "more than %d profiles", PROFILES_CAP);
			return -1;
		}
		json_object_set_new(st->keys, key, json_true());
		dir = geak_xasprintf("%s/%s", st->dir, key);
		if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
			snprintf(why, n, "cannot make %s: %s", dir, strerror(errno));
			free(dir);
			return -1;
		}
	}
	r = write_member(a, st, dir, file == NFILES ? MANIFEST : member_names[file], cap, reason,
	    sizeof reason);
	if (r < 0)
		snprintf(why, n, "member '%s': %s", path, reason);
	free(dir);
	return r;
}

/* Every member of the archive at file into st->dir; 0, or -1 with why. */
static int
stage_archive(const char *file, struct stage *st, char *why, size_t n)
{
	struct archive *a = la.read_new();
	struct archive_entry *e;
	int r = 0, got;

	if (!a) {
		snprintf(why, n, "out of memory");
		return -1;
	}
	la.read_filter_gzip(a);
	la.read_format_tar(a);
	if (la.read_open(a, file, 65536) != ARCHIVE_OK) {
		snprintf(why, n, "%s", la_why(a));
		la.read_free(a);
		return -1;
	}
	while (r == 0 && (got = la.read_next(a, &e)) != ARCHIVE_EOF) {
		if (got != ARCHIVE_OK && got != ARCHIVE_WARN) {
			snprintf(why, n, "%s", la_why(a));
			r = -1;
			break;
		}
		r = stage_member(a, e, st, why, n);
	}
	la.read_free(a);
	if (r == 0) {
		st->manifest = load_json(st->dir, MANIFEST, why, n);
		if (!st->manifest)
			r = -1;
		else if (!json_is_string(json_object_get(st->manifest, "format")) ||
		    strcmp(geak_get_str(st->manifest, "format"), FORMAT)) {
			snprintf(why, n, "%s: field format: not \"%s\"", MANIFEST, FORMAT);
			r = -1;
		}
	}
	return r;
}

/* ---- import ---- */

static json_t *
local_hello(struct geak_slot *s, const char *opt)
{
	char err[2048];

	if (geak_slot_hello(s))
		return geak_slot_hello(s);
	if (geak_slot_up(s, GEAK_W_RUN, err, sizeof err) < 0) {
		geak_warn("%s: the harness cannot start, so this machine's device is not known: %s",
		    opt, err);
		return NULL;
	}
	return s->w[GEAK_W_RUN].hello;
}

/* One line of the import's account, on stdout when nothing is evaluated
 * (the records go there otherwise), and the refusals on stderr. */
static void
say_import(const char *file, const char *key, json_t *spec, const char *state, const char *why,
    int to_stdout)
{
	char *task = spec ? task_of(spec) : geak_xstrdup("?");
	json_t *line;

	if (why)
		geak_warn("--import-calibration: %s: task %s (profile %.12s): refused: %s", file, task,
		    key, why);
	if (to_stdout) {
		line = json_pack("{s:s, s:s, s:s}", "key", key, "task", task, "import", state);
		if (why)
			json_object_set_new(line, "why", json_string(why));
		json_dumpf(line, stdout, JSON_COMPACT);
		putchar('\n');
		json_decref(line);
	}
	free(task);
}

static int
import(struct geak_slot *s, const char *file, int to_stdout)
{
	char why[1024], *base, *stage_dir;
	struct stage st = { 0 };
	json_t *hello;
	const char *key;
	json_t *v;
	size_t n_in = 0, n_had = 0, n_refused = 0;

	if (load_libarchive(why, sizeof why) < 0) {
		geak_warn("--import-calibration: %s", why);
		return GEAK_EXIT_FATAL;
	}
	base = geak_xasprintf("%s/profile", s->cfg->cache_dir);
	if (geak_mkdirs(base, 0700) < 0 || !(stage_dir = geak_mkworkdir(base, "import-"))) {
		geak_warn("--import-calibration: cannot make a folder in %s:", base);
		free(base);
		return GEAK_EXIT_FATAL;
	}
	st.dir = stage_dir;
	st.keys = json_object();
	if (stage_archive(file, &st, why, sizeof why) < 0) {
		geak_warn("--import-calibration: %s: %s: refused, nothing imported", file, why);
		geak_rmtree(stage_dir);
		free(stage_dir), free(base);
		json_decref(st.keys), json_decref(st.manifest);
		return GEAK_EXIT_FATAL;
	}
	/* Known once the archive is: a refused one starts no harness. */
	if (!(hello = local_hello(s, "--import-calibration"))) {
		geak_rmtree(stage_dir);
		free(stage_dir), free(base);
		json_decref(st.keys), json_decref(st.manifest);
		return GEAK_EXIT_FATAL;
	}
	json_object_foreach(st.keys, key, v) {
		char *dir = geak_xasprintf("%s/%s", stage_dir, key), *to = geak_xasprintf("%s/%s", base, key);
		json_t *spec;
		const char *refused = check_profile(dir, key, hello, &spec, why, sizeof why);
		struct stat sb;

		if (refused) {
			n_refused++;
			say_import(file, key, spec, "refused", refused, to_stdout);
		} else if (lstat(to, &sb) == 0 ||
		    (rename(dir, to) < 0 && (errno == EEXIST || errno == ENOTEMPTY))) {
			/* The cache's own profile of the task stays. */
			n_had++;
			say_import(file, key, spec, "present", NULL, to_stdout);
		} else if (lstat(to, &sb) == 0) {
			n_in++;
			say_import(file, key, spec, "imported", NULL, to_stdout);
		} else {
			n_refused++;
			snprintf(why, sizeof why, "cannot move it into %s: %s", base, strerror(errno));
			say_import(file, key, spec, "refused", why, to_stdout);
		}
		json_decref(spec);
		free(dir), free(to);
	}
	geak_rmtree(stage_dir);
	geak_warn("--import-calibration: %s: %zu profiles imported, %zu in the cache already, "
	    "%zu refused", file, n_in, n_had, n_refused);
	free(stage_dir), free(base);
	json_decref(st.keys), json_decref(st.manifest);
	return n_refused ? GEAK_EXIT_RECORDS : GEAK_EXIT_OK;
}

/* ---- export ---- */

/* The tasks whose records this run read: "suite\nname\nsha256(reference)". */
static json_t *tasks_read;
static pthread_mutex_t tasks_mu = PTHREAD_MUTEX_INITIALIZER;
static int (*pool_fn)(void *slot, json_t *rec, const char *where);

static char *
task_id(const char *suite, const char *name, const char *reference)
{
	char sha[65];

	geak_sha256_hex(reference, strlen(reference), sha);
	return geak_xasprintf("%s\n%s\n%s", suite, name, sha);
}

static int
noting_fn(void *slot, json_t *rec, const char *where)
{
	const char *suite = geak_get_str(rec, "task.suite"), *name = geak_get_str(rec, "task.name");
	const char *ref = geak_get_str(rec, "task.reference");

	if (suite && name && ref) {
		char *id = task_id(suite, name, ref);
		pthread_mutex_lock(&tasks_mu);
		json_object_set_new(tasks_read, id, json_true());
		pthread_mutex_unlock(&tasks_mu);
		free(id);
	}
	return pool_fn ? pool_fn(slot, rec, where) : GEAK_DONE;
}

/* What goes out: key -> {"spec", "dir"}. */
struct outgoing {
	json_t *profiles;
};

static void
add_run_profile(void *arg, const char *key, json_t *refspec, const char *dir)
{
	struct outgoing *o = arg;

	if (!json_object_get(o->profiles, key))
		json_object_set_new(o->profiles, key, json_pack("{s:O, s:s}", "spec", refspec, "dir", dir));
}

/* Profiles in the cache of the tasks read whose spec is this machine's:
 * a candidate answered from the evaluation cache never loads its
 * task's profile. */
static void
add_cached_profiles(const struct geak_evalcfg *cfg, struct outgoing *o, json_t *hello)
{
	char *base = geak_xasprintf("%s/profile", cfg->cache_dir), why[256];
	DIR *d = opendir(base);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char *dir;
		json_t *spec;
		if (!is_key(de->d_name, strlen(de->d_name)) || json_object_get(o->profiles, de->d_name))
			continue;
		dir = geak_xasprintf("%s/%s", base, de->d_name);
		spec = load_json(dir, GEAK_FILE_SPEC, why, sizeof why);
		if (json_is_object(spec) && json_is_string(json_object_get(spec, GEAK_JOB_CODE)) &&
		    json_is_string(json_object_get(spec, GEAK_JOB_SUITE)) && json_is_string(json_object_get(spec, GEAK_JOB_NAME)) &&
		    json_equal(json_object_get(spec, GEAK_JOB_HARNESS), json_object_get(hello, GEAK_HELLO_HARNESS)) &&
		    json_equal(json_object_get(spec, GEAK_JOB_VERSIONS), json_object_get(hello, GEAK_HELLO_VERSIONS)) &&
		    json_equal(json_object_get(spec, GEAK_JOB_DEVICE), json_object_get(hello, GEAK_HELLO_DEVICE))) {
			char *id = task_id(geak_get_str(spec, GEAK_JOB_SUITE), geak_get_str(spec, GEAK_JOB_NAME),
			    geak_get_str(spec, GEAK_JOB_CODE));
			if (json_object_get(tasks_read, id))
				add_run_profile(o, de->d_name, spec, dir);
			free(id);
		}
		json_decref(spec);
		free(dir);
	}
	if (d)
		closedir(d);
	free(base);
}

static int
put_entry(struct archive *a, const char *path, const void *data, size_t len, char *why, size_t n)
{
	struct archive_entry *e = la.entry_new();
	int r = 0;

	if (!e) {
		snprintf(why, n, "out of memory");
		return -1;
	}
	la.entry_set_pathname(e, path);
	la.entry_set_size(e, (la_int64_t)len);
	la.entry_set_filetype(e, AE_IFREG);
	la.entry_set_perm(e, 0644);
	la.entry_set_mtime(e, time(NULL), 0);
	if (la.write_header(a, e) != ARCHIVE_OK ||
	    (len && la.write_data(a, data, len) != (la_ssize_t)len)) {
		snprintf(why, n, "%s: %s", path, la_why(a));
		r = -1;
	}
	la.entry_free(e);
	return r;
}

static int
put_json(struct archive *a, const char *path, json_t *v, char *why, size_t n)
{
	char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	int r;

	if (!s) {
		snprintf(why, n, "%s: cannot encode", path);
		return -1;
	}
	r = put_entry(a, path, s, strlen(s), why, n);
	free(s);
	return r;
}

/* dir/name into the archive as path, when it is there; 0 (also when it
 * is not), or -1 with why set. */
static int
put_file(struct archive *a, const char *dir, const char *name, const char *path,
    unsigned long long cap, char *why, size_t n)
{
	size_t len;
	char *s = geak_read_untrusted(dir, name, (size_t)cap, &len);
	int r;

	if (!s && errno == ENOENT)
		return 0;
	if (!s) {
		snprintf(why, n, "%s/%s: %s", dir, name, geak_untrusted_why(errno));
		return -1;
	}
	r = put_entry(a, path, s, len, why, n);
	free(s);
	return r;
}

/* One profile's members; 1 when written, 0 when left out (why says so),
 * -1 when the archive failed. */
static int
put_profile(struct archive *a, const char *key, json_t *spec, const char *dir, char *why, size_t n)
{
	char path[KEYLEN + 32];
	json_t *prof = load_json(dir, GEAK_FILE_PROFILE, why, n);
	int ok = json_is_true(json_object_get(prof, GEAK_PROF_OK));

	if (!prof)
		return 0;
	if (ok && !json_is_object(json_object_get(prof, GEAK_PROF_CANON_SUMS))) {
		snprintf(why, n, "its profile records no sums of its outputs (an older harness)");
		json_decref(prof);
		return 0;
	}
	snprintf(path, sizeof path, "%s/%s", key, GEAK_FILE_SPEC);
	if (put_json(a, path, spec, why, n) < 0)
		goto fail;
	snprintf(path, sizeof path, "%s/%s", key, GEAK_FILE_PROFILE);
	if (put_json(a, path, prof, why, n) < 0)
		goto fail;
	snprintf(path, sizeof path, "%s/pins.json", key);
	if (put_file(a, dir, "pins.json", path, JSON_CAP, why, n) < 0)
		goto fail;
	snprintf(path, sizeof path, "%s/%s", key, GEAK_FILE_MASKS);
	if (ok && put_file(a, dir, GEAK_FILE_MASKS, path, MASKS_CAP, why, n) < 0)
		goto fail;
	json_decref(prof);
	return 1;
fail:
	json_decref(prof);
	return -1;
}

static int
export(struct geak_slot *s, const char *file)
{
	char why[1024], *tmp = geak_xasprintf("%s.%ld.tmp", file, (long)getpid());
	struct outgoing o = { json_object() };
	struct archive *a = NULL;
	json_t *hello = geak_slot_hello(s), *manifest, *list = json_array(), *p;
	const char *key;
	size_t wrote = 0;
	int r = -1;

	if (load_libarchive(why, sizeof why) < 0)
		goto out;
	geak_profile_each(add_run_profile, &o);
	if (hello)
		add_cached_profiles(s->cfg, &o, hello);
	json_object_foreach(o.profiles, key, p) {
		json_t *spec = json_object_get(p, "spec");
		json_array_append_new(list, json_pack("{s:s, s:O, s:O}", "key", key,
		    "suite", json_object_get(spec, GEAK_JOB_SUITE), "name", json_object_get(spec, GEAK_JOB_NAME)));
	}
	manifest = json_pack("{s:s, s:O, s:O, s:o}", "format", FORMAT,
	    "harness", hello ? json_object_get(hello, GEAK_HELLO_HARNESS) : json_null(),
	    "device", hello ? json_object_get(hello, GEAK_HELLO_DEVICE) : json_null(), "profiles", list);
	list = NULL;
	if (!(a = la.write_new()) || la.write_filter_gzip(a) != ARCHIVE_OK ||
	    la.write_format(a) != ARCHIVE_OK || la.write_open(a, tmp) != ARCHIVE_OK) {
		snprintf(why, sizeof why, "%s", a ? la_why(a) : "out of memory");
		json_decref(manifest);
		goto out;
	}
	if (put_json(a, MANIFEST, manifest, why, sizeof why) < 0) {
		json_decref(manifest);
		goto out;
	}
	json_decref(manifest);
	json_object_foreach(o.profiles, key, p) {
		int got = put_profile(a, key, json_object_get(p, "spec"), geak_get_str(p, "dir"), why, sizeof why);
		if (got < 0)
			goto out;
		if (got == 0) {
			char *task = task_of(json_object_get(p, "spec"));
			geak_warn("--export-calibration: task %s (profile %.12s) left out: %s", task, key, why);
			free(task);
		}
		wrote += (size_t)got;
	}
	if (la.write_close(a) != ARCHIVE_OK) {
		snprintf(why, sizeof why, "%s", la_why(a));
		goto out;
	}
	if (rename(tmp, file) < 0) {
		snprintf(why, sizeof why, "%s", strerror(errno));
		goto out;
	}
	geak_warn("--export-calibration: %s: %zu profiles", file, wrote);
	r = 0;
out:
	if (a)
		la.write_free(a);
	if (r < 0) {
		unlink(tmp);
		geak_warn("--export-calibration: %s: %s", file, why);
	}
	json_decref(list), json_decref(o.profiles);
	free(tmp);
	return r < 0 ? GEAK_EXIT_FATAL : GEAK_EXIT_OK;
}

/* ---- the run ---- */

int
geak_calib_run(struct geak_slot *s, struct geak_pool *pool, const char *export_path,
    const char *import_path)
{
	int imported = GEAK_EXIT_OK, status, exported;
	char why[256];

	if (export_path && load_libarchive(why, sizeof why) < 0) {
		/* Said before the run, not after hours of it. */
		geak_warn("--export-calibration: %s", why);
		return GEAK_EXIT_FATAL;
	}
	if (import_path) {
		imported = import(s, import_path, pool->npaths == 0);
		if (imported == GEAK_EXIT_FATAL || pool->npaths == 0) {
			if (fflush(stdout) == EOF || ferror(stdout)) {
				geak_warn("stdout:");
				return GEAK_EXIT_FATAL;
			}
			return imported;
		}
	}
	if (!export_path)
		return (status = geak_pool_run(pool)) ? status : imported;
	tasks_read = json_object();
	pool_fn = pool->fn;
	pool->fn = noting_fn;
	status = geak_pool_run(pool);
	pool->fn = pool_fn;
	exported = export(s, export_path);
	json_decref(tasks_read);
	tasks_read = NULL;
	if (exported == GEAK_EXIT_FATAL)
		return GEAK_EXIT_FATAL;
	return status ? status : imported;
}
