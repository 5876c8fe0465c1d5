/* geak-import: turn the TritonBench-revised, ROCm and KernelBench
 * benchmarks, as a user has them (a checkout, a downloaded archive, loose
 * instruction files), into task records. */
#include <getopt.h>
#include <sys/stat.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "bench/benchsrc.h"
#include "bench/kbprob.h"
#include "bench/owntask.h"
#include "prompt.h"
#include "eval/pyenv.h"
#include "eval/sandbox.h"
#include "bench/pysig.h"
#include "record.h"
#include "recpool.h"
#include "runner.h"
#include "util.h"

/* What a file is, known from its place in the upstream layouts. */
enum kind {
	K_TBG,         /* GEAK-eval's TritonBench-revised kernel file */
	K_TBG_PERF,    /* its per-kernel perf script */
	K_ROCM,        /* ROCm benchmark kernel file */
	K_ROCM_TUNE,   /* its autotune-friendly variant */
	K_ORIG,        /* thunlp's original TritonBench-G kernel file */
	K_KB,          /* KernelBench problem file */
	K_TBG_INSTR,   /* instruction files, known by name alone */
	K_ROCM_INSTR,
	K_ORIG_META,
	K_ORIG_ALPAC,
};

/* Folders of kernel files: "<dir><name><suffix>", dir at the start of the
 * path or after a '/', so that any archive root or checkout name works. */
static const struct layout {
	enum kind kind;
	const char *dir, *suffix;
} layouts[] = {
	{K_TBG, "geak_eval/data/TritonBench/data/TritonBench_G_v1/", ".py"},
	{K_TBG_PERF, "geak_eval/data/TritonBench/performance_metrics/perf_G/golden_metrics/", "_perf.py"},
	{K_ROCM, "geak_eval/data/ROCm/data/ROCm_v1/", ".py"},
	{K_ROCM_TUNE, "geak_eval/data/ROCm/data/ROCm_v1_autotune/", ".py"},
	/* thunlp's layout is a suffix of GEAK-eval's: tried last, and
	 * never under geak_eval/. */
	{K_ORIG, "data/TritonBench_G_v1/", ".py"},
	/* KernelBench's levels 1-3 (level 4 needs models from the network). */
	{K_KB, "KernelBench/level1/", ".py"},
	{K_KB, "KernelBench/level2/", ".py"},
	{K_KB, "KernelBench/level3/", ".py"},
};

/* Files found by their base name: the JSON files are not on GEAK-eval's
 * main branch, so users often fetch them separately. */
static const struct named {
	enum kind kind;
	const char *name;
} named[] = {
	{K_TBG_INSTR, "TritonBench_G_comp_alpac_v1_fixed_with_difficulty.json"},
	{K_ROCM_INSTR, "ROCm_eval_complex_instruct_v1.json"},
	{K_ORIG_META, "TritonBench_G_v1.json"},
	{K_ORIG_ALPAC, "TritonBench_G_comp_alpac_v1.json"},
};

struct file {
	enum kind kind;
	char *name;   /* kernel name, or the JSON file's base name */
	char *path;   /* path inside the upstream layout */
	char *data;
	size_t len;
	const char *origin; /* the source it came from */
};

struct store {
	struct file *files;
	size_t n, cap;
	const char *origin;
	int thunlp_only;  /* reading the --original-hip source */
};

struct task {
	const char *suite; /* "tbg", "rocm" or "kernelbench" */
	struct file *kernel;
	int original;      /* thunlp's file: no GEAK-eval kernels were given */
	int selected;
};

struct opts {
	int suite_tbg, suite_rocm, suite_kb;
	int level[4];      /* level[l] = 1 when selected */
	int any_level;     /* no --level given */
	double kb_timeout;  /* task.timeout of level-3 tasks; 0: none */
	long cpu_elements;  /* the CPU-mode rule's input size, elements */
	const char *prompts;
	int difficulty[8]; /* difficulty[d] = 1 when selected */
	int any_difficulty; /* no --difficulty given */
	char **ids;
	size_t nids;
	int ids_given;  /* --ids seen, even if its list was empty */
	int *id_used;
	int as_candidate, list;
	const char *original_hip;
	const char *cpu_ok_path;
	/* a task file of the user's own */
	const char *code_path;    /* --code: the starting kernel */
	char *code;               /* its text */
	const char *entry, *instruction, *name;
};

static const char *const license_tbg = "Apache-2.0";
static const char *const license_rocm = "Apache-2.0 AND MIT";
static const char *const license_kb = "MIT";

/* Under Triton's interpreter elements go at a few million a second at
 * best (tests/bench/kernelbench-cpu.sh), against the evaluator's four
 * runs of a candidate in its time limit. */
#define KB_CPU_ELEMENTS (1L << 22)
/* Matrix products, convolutions and attention do work that grows faster
 * than their inputs: a 64-fold smaller input. */
#define KB_CPU_HEAVY_SHIFT 6
#define KB_LEVEL3_TIMEOUT 600.0
/* Copies of a problem's inputs a job holds at once on the host (its
 * draws, the reference's and the candidate's outputs, a seed's saved
 * ones), for task.memory_mib. */
#define KB_MEMORY_COPIES 4

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: %s [--suite tbg|rocm|kernelbench|all] [--difficulty LIST] [--level LIST]\n"
	    "       [--ids LIST|FILE] [--original-hip SOURCE] [--cpu-ok FILE]\n"
	    "       [--cpu-elements N] [--level3-timeout SECONDS] [--prompts DIR]\n"
	    "       [--as-candidate] [-l] SOURCE...\n"
	    "       %s [--code KERNEL.py] [--entry NAME] [--instruction TEXT] [--name NAME]\n"
	    "       [--as-candidate] [--prompts DIR] [-l] FILE.py...\n"
	    "Turn TritonBench-revised (tbg, 184 kernels), the ROCm benchmark (rocm, 31)\n"
	    "and KernelBench (kernelbench) into task records; or a Python file of your own,\n"
	    "known by what it defines: a function and inputs() (a plain task), or class\n"
	    "Model, get_inputs() and get_init_inputs() (a KernelBench-style problem).\n"
	    "      --suite SUITE         tbg, rocm, kernelbench or all (default)\n"
	    "      --difficulty LIST     only tbg tasks of these difficulties (1,2,4-5)\n"
	    "      --level LIST          only KernelBench tasks of these levels (1,3 or 1-2)\n"
	    "      --ids LIST|FILE       only these tasks: ids, names or file names, comma-\n"
	    "                            separated, or one a line in FILE\n"
	    "      --original-hip SOURCE thunlp/TritonBench: its CUDA originals for the\n"
	    "                            references that call AMD's libdevice\n"
	    "      --cpu-ok FILE         the tasks measured to run on Triton's CPU interpreter\n"
	    "                            (default share/bench/cpu-ok.txt): task.cpu_ok\n"
	    "      --cpu-elements N      the input size up to which a level-1 KernelBench\n"
	    "                            problem is task.cpu_ok\n"
	    "      --level3-timeout S    task.timeout of level-3 KernelBench tasks (default\n"
	    "                            600; 0: none)\n"
	    "      --prompts DIR         look for the import-*.txt templates in DIR first\n"
	    "      --as-candidate        also the reference as the candidate (code, code_sha)\n"
	    "      --code KERNEL.py      your own file's starting kernel: the first candidate\n"
	    "      --entry NAME          the reference function of a plain task (default: the\n"
	    "                            file's only function besides inputs() and the like)\n"
	    "      --instruction TEXT    task.instruction (default: written from the function\n"
	    "                            or the problem, with prompts/import-own.txt or\n"
	    "                            import-kernelbench.txt)\n"
	    "      --name NAME           task.name (default: the file's name)\n"
	    "  -l, --list                print the task ids instead of records\n"
	    "  -h, --help                this help\n"
	    "      --version             print the version\n"
	    "SOURCE: a checkout of AMD-AGI/GEAK-eval, thunlp/TritonBench or KernelBench (a\n"
	    "folder), an archive of one (tar, tar.gz, zip, ...; '-' for stdin, read in\n"
	    "place), or a loose instruction JSON file (GEAK-eval keeps those on its branch\n"
	    "geak-rocm).\n",
	    geak_prog, geak_prog);
}

/* The file's kind and kernel name from its path, or -1 when unwanted. */
static int
classify(const char *path, int thunlp_only, char **name, const char **upath)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (strcmp(base, named[i].name) == 0 &&
		    (!thunlp_only || named[i].kind == K_ORIG_META)) {
			*name = geak_xstrdup(base);
			*upath = path;
			return named[i].kind;
		}
	for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
		const struct layout *l = &layouts[i];
		size_t dl = strlen(l->dir), sl = strlen(l->suffix), bl = strlen(base);
		const char *at;
		if (thunlp_only && l->kind != K_ORIG)
			continue;
		if (base - path < (ptrdiff_t)dl || strncmp(base - dl, l->dir, dl) != 0)
			continue;
		at = base - dl;
		if (at != path && at[-1] != '/')
			continue;
		if (l->kind == K_ORIG && strstr(path, "geak_eval/"))
			continue;
		if (bl <= sl || strcmp(base + bl - sl, l->suffix) != 0 ||
		    strcmp(base, "__init__.py") == 0)
			continue;
		if (l->kind == K_KB) /* "level1/19_ReLU": the level is part of it */
			*name = geak_xasprintf("%.*s/%.*s", (int)(dl - 13), l->dir + 12,
			    (int)(bl - sl), base);
		else
			*name = geak_xstrndup(base, bl - sl);
		*upath = at;
		return l->kind;
	}
	return -1;
}

static struct file *
find(struct store *st, enum kind kind, const char *name)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->files[i].kind == kind && strcmp(st->files[i].name, name) == 0)
			return &st->files[i];
	return NULL;
}

static int
want_file(const char *path, void *ctx)
{
	struct store *st = ctx;
	const char *upath;
	char *name = NULL;
	int kind = classify(path, st->thunlp_only, &name, &upath);

	free(name);
	return kind >= 0;
}

static void
take_file(const char *path, char *data, size_t len, void *ctx)
{
	struct store *st = ctx;
	const char *upath;
	char *name = NULL;
	int kind = classify(path, st->thunlp_only, &name, &upath);
	struct file *old = find(st, (enum kind)kind, name);

	if (old) {
		/* The same file reached twice (a source named twice, or
		 * --original-hip also given as a source) is no conflict. */
		if (old->len != len || memcmp(old->data, data, len) != 0)
			geak_warn("%s: %s: differs from the copy in %s; keeping that one",
			    st->origin, path, old->origin);
		free(name);
		free(data);
		return;
	}
	if (st->n == st->cap) {
		st->cap = st->cap ? 2 * st->cap : 256;
		st->files = geak_xrealloc(st->files, st->cap * sizeof *st->files);
	}
	st->files[st->n++] = (struct file){(enum kind)kind, name, geak_xstrdup(upath),
		data, len, st->origin};
}

static void
store_free(struct store *st)
{
	for (size_t i = 0; i < st->n; i++) {
		free(st->files[i].name);
		free(st->files[i].path);
		free(st->files[i].data);
	}
	free(st->files);
}

/* The JSON list in the file of this kind; NULL when there is none. */
static json_t *
load_list(struct store *st, enum kind kind)
{
	struct file *f = NULL;
	json_error_t err;
	json_t *list;

	for (size_t i = 0; i < st->n && !f; i++)
		if (st->files[i].kind == kind)
			f = &st->files[i];
	if (!f)
		return NULL;
	if (!(list = json_loadb(f->data, f->len, 0, &err)))
		geak_die(GEAK_EXIT_FATAL, "%s: %s:%d:%d: %s", f->origin, f->path, err.line,
		    err.column, err.text);
	if (!json_is_array(list))
		geak_die(GEAK_EXIT_FATAL, "%s: %s: not a JSON list", f->origin, f->path);
	return list;
}

/* An instruction or metadata file as an object keyed by "file". */
static json_t *
index_instructions(struct store *st, enum kind kind)
{
	json_t *list = load_list(st, kind), *by_file = json_object(), *item;
	size_t i;

	if (!by_file)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	json_array_foreach(list, i, item) {
		const char *file = json_string_value(json_object_get(item, "file"));
		if (file)
			json_object_set(by_file, file, item);
	}
	json_decref(list);
	return by_file;
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return m > 0 && n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/* Fill in tbg instructions from thunlp's own files for every kernel that
 * GEAK-eval's instruction file (absent, or not given) does not cover:
 * thunlp's prompt list has no file names, but each prompt ends with the
 * description that TritonBench_G_v1.json gives for its file.  GEAK-eval's
 * instructions are the same texts. */
static void
add_thunlp_instructions(struct store *st, json_t *tbg_index, json_t *meta_index)
{
	json_t *alpac = load_list(st, K_ORIG_ALPAC), *meta, *prompt;
	const char *file;

	json_object_foreach(meta_index, file, meta) {
		const char *descr = json_string_value(json_object_get(meta, "comp_instru"));
		size_t i;
		if (!descr || json_object_get(tbg_index, file))
			continue;
		json_array_foreach(alpac, i, prompt) {
			const char *text = json_string_value(json_object_get(prompt, "instruction"));
			if (text && ends_with(text, descr)) {
				json_object_set_new(tbg_index, file, json_pack("{s:s, s:O?}",
				    "instruction", text, "difficulty", json_object_get(meta, "difficulty")));
				break;
			}
		}
	}
	json_decref(alpac);
}

/* Parse a list like "1,2,4-5" of numbers from 1 to max into sel[1..max]. */
static void
parse_ranges(const char *arg, const char *opt, long max, int *sel)
{
	char *copy = geak_xstrdup(arg), *save = NULL;

	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		long lo, hi;
		if (dash)
			*dash = '\0';
		lo = geak_parse_long(tok, opt, 1, max);
		hi = dash ? geak_parse_long(dash + 1, opt, lo, max) : lo;
		for (long k = lo; k <= hi; k++)
			sel[k] = 1;
	}
	free(copy);
}

static void
add_id(struct opts *o, const char *s, size_t n)
{
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	if (n == 0 || *s == '#')
		return;
	o->ids = geak_xrealloc(o->ids, (o->nids + 1) * sizeof *o->ids);
	o->ids[o->nids++] = geak_xstrndup(s, n);
}

/* --ids: a comma-separated list, or a file of one id per line. */
static void
parse_ids(const char *arg, struct opts *o)
{
	char *text = NULL;
	const char *p, *sepchars = ",";

	if (!strchr(arg, ',') && (text = geak_read_file(arg, NULL)))
		sepchars = "\n";
	p = text ? text : arg;
	o->ids_given = 1;
	for (;;) {
		size_t n = strcspn(p, sepchars);
		add_id(o, p, n);
		if (!p[n])
			break;
		p += n + 1;
	}
	free(text);
}

/* 1 when an --ids entry names the task: "suite/name", "name" or "name.py"
 * (a KernelBench name holds its level: "level1/19_ReLU"). */
static int
id_matches(const char *want, const struct task *t)
{
	size_t sl = strlen(t->suite), nl = strlen(t->kernel->name);

	if (strncmp(want, t->suite, sl) == 0 && want[sl] == '/')
		want += sl + 1;
	else if (strchr(want, '/') && !strchr(t->kernel->name, '/'))
		return 0;
	return strncmp(want, t->kernel->name, nl) == 0 &&
	    (want[nl] == '\0' || strcmp(want + nl, ".py") == 0);
}

/* KernelBench's "level1/19_ReLU" as (1, 19). */
static void
kb_numbers(const char *name, long *level, long *number)
{
	*level = strtol(name + 5, NULL, 10);
	*number = strtol(strchr(name, '/') + 1, NULL, 10);
}

static int
cmp_task(const void *a, const void *b)
{
	const struct task *x = a, *y = b;
	int r = strcmp(y->suite, x->suite); /* tbg, rocm, kernelbench */
	long xl, xn, yl, yn;

	if (r || strcmp(x->suite, "kernelbench") != 0)
		return r ? r : strcmp(x->kernel->name, y->kernel->name);
	/* by level, then by problem number as KernelBench counts them */
	kb_numbers(x->kernel->name, &xl, &xn);
	kb_numbers(y->kernel->name, &yl, &yn);
	if (xl != yl)
		return xl < yl ? -1 : 1;
	if (xn != yn)
		return xn < yn ? -1 : 1;
	return strcmp(x->kernel->name, y->kernel->name);
}

/* The entry about t in an index made by index_instructions. */
static json_t *
by_file(json_t *index, const struct task *t)
{
	char *file = geak_xasprintf("%s.py", t->kernel->name);
	json_t *item = json_object_get(index, file);

	free(file);
	return item;
}

/* The difficulty of a tbg task, 0 when unknown. */
static int
difficulty_of(json_t *item)
{
	json_t *d = json_object_get(item, "difficulty");
	char *end;
	long v;

	if (json_is_integer(d))
		v = (long)json_integer_value(d);
	else if (!json_is_string(d))
		return 0;
	else if ((v = strtol(json_string_value(d), &end, 10)), *end)
		return 0;
	return v < 1 || v > 7 ? 0 : (int)v;
}

static void
select_tasks(struct task *tasks, size_t n, json_t *tbg_index, struct opts *o)
{
	for (size_t i = 0; i < n; i++) {
		struct task *t = &tasks[i];
		int is_tbg = strcmp(t->suite, "tbg") == 0, is_kb = strcmp(t->suite, "kernelbench") == 0;
		t->selected = is_tbg ? o->suite_tbg : is_kb ? o->suite_kb : o->suite_rocm;
		if (t->selected && o->ids_given) {
			int hit = 0;
			for (size_t j = 0; j < o->nids; j++)
				if (id_matches(o->ids[j], t))
					hit = o->id_used[j] = 1;
			t->selected = hit;
		}
		/* A tbg task of unknown difficulty is kept: it comes out with its
		 * error (it has none to be chosen by), not dropped unseen. */
		if (t->selected && !o->any_difficulty) {
			int d = is_tbg ? difficulty_of(by_file(tbg_index, t)) : 0;
			t->selected = o->difficulty[d] || (is_tbg && d == 0);
		}
		if (t->selected && !o->any_level) {
			long level = 0, number;
			if (is_kb)
				kb_numbers(t->kernel->name, &level, &number);
			t->selected = is_kb && level >= 1 && level <= 3 && o->level[level];
		}
	}
}

/* The ids listed in the measured CPU-interpreter file: one per line, the
 * first word counts, '#' starts a comment, a bare name means tbg. */
static json_t *
load_cpu_ok(const char *path)
{
	char *text = geak_read_file(path, NULL), *save = NULL;
	json_t *set;

	if (!text)
		return NULL;
	if (!(set = json_object()))
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line += strspn(line, " \t");
		line[strcspn(line, " \t\r#")] = '\0';
		if (!*line)
			continue;
		char *id = strchr(line, '/') ? geak_xstrdup(line) : geak_xasprintf("tbg/%s", line);
		json_object_set_new(set, id, json_true());
		free(id);
	}
	free(text);
	return set;
}

/* Text reaches set_str only after not_text found nothing wrong. */
static void
set_str(json_t *obj, const char *key, const char *value)
{
	json_t *s = json_string(value);

	if (!s || json_object_set_new(obj, key, s) < 0)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
}

/* NULL when the file is UTF-8 text without NUL bytes, else why not. */
static const char *
not_text(const struct file *f)
{
	json_t *probe;

	if (strlen(f->data) != f->len)
		return "contains a NUL byte";
	if (!(probe = json_stringn(f->data, f->len)))
		return "not valid UTF-8";
	json_decref(probe);
	return NULL;
}

static int
has_text(const char *s)
{
	return s && s[strspn(s, " \t\r\n")] != '\0';
}

/* Split f into reference and test and put them into task; returns NULL
 * or what is wrong. */
static const char *
put_parts(json_t *task, const struct file *f, const char *test_key)
{
	char *code, *test;
	const char *why;

	if ((why = not_text(f)) || geak_bench_split(f->data, &code, &test, &why) < 0)
		return why;
	if (test_key == NULL) {
		if (!has_text(code))
			why = "empty reference code";
		else if (!has_text(test))
			why = "empty test code";
		else {
			set_str(task, "reference", code);
			set_str(task, "test", test);
		}
	} else if (!has_text(test)) {
		why = "empty test code";
	} else {
		set_str(task, test_key, test);
	}
	free(code);
	free(test);
	return why;
}

struct ctx {
	struct store *st;
	json_t *tbg_index, *rocm_index, *orig_index, *cpu_ok;
	const struct opts *o;
};

/* Swap in thunlp's original of a kernel that uses AMD's device library.
 * Only the code: GEAK-eval's revised test part stays (it fixes the
 * original's tests, e.g. llama_ff_triton never assigns result_gold). */
static const char *
swap_original(json_t *task, const struct task *t, const struct ctx *c)
{
	const char *ref = json_string_value(json_object_get(task, "reference"));
	struct file *orig;
	char *code, *test;
	const char *why;

	if (!ref || !geak_bench_uses_hip_libdevice(ref))
		return NULL;
	if (!(orig = find(c->st, K_ORIG, t->kernel->name)))
		return "uses tl.extra.hip.libdevice and --original-hip has no original of it";
	if ((why = not_text(orig)) || geak_bench_split(orig->data, &code, &test, &why) < 0)
		return why;
	if (has_text(code))
		set_str(task, "reference", code);
	else
		why = "the original's reference code is empty";
	free(code);
	free(test);
	if (why)
		return why;
	set_str(task, "source", orig->path);
	set_str(task, "variant", "tritonbench-original");
	return NULL;
}

static const char *
fill_tbg(json_t *task, const struct task *t, const struct ctx *c)
{
	json_t *item = by_file(c->tbg_index, t), *meta;
	const char *instr = json_string_value(json_object_get(item, "instruction"));
	const char *test, *why;
	struct file *perf;
	int d;

	if (t->original)
		set_str(task, "variant", "tritonbench-original");
	if ((why = put_parts(task, t->kernel, NULL)))
		return why;
	test = json_string_value(json_object_get(task, "test"));
	if (!geak_bench_assigns(test, "result_gold"))
		return "the test part never assigns result_gold";
	if (!instr)
		return "no instruction for it in the instruction files";
	set_str(task, "instruction", instr);
	if ((perf = find(c->st, K_TBG_PERF, t->kernel->name))) {
		if (not_text(perf))
			return "the perf script is not UTF-8 text";
		set_str(task, "perf", perf->data);
	}
	if (!(d = difficulty_of(item)))
		return "no valid difficulty in the instruction file";
	json_object_set_new(task, "difficulty", json_integer(d));
	meta = by_file(c->orig_index, t);
	if (json_is_string(json_object_get(meta, "repo")))
		json_object_set(task, "repo", json_object_get(meta, "repo"));
	set_str(task, "license", license_tbg);
	if (c->o->original_hip && !t->original)
		return swap_original(task, t, c);
	return NULL;
}

static json_t *
split_names(const char *list)
{
	json_t *arr = json_array();

	if (!arr)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	for (const char *p = list; *p;) {
		size_t n;
		p += strspn(p, " ,");
		n = strcspn(p, " ,");
		if (n)
			json_array_append_new(arr, json_stringn(p, n));
		p += n;
	}
	return arr;
}

static const char *
fill_rocm(json_t *task, const struct task *t, const struct ctx *c)
{
	json_t *item = by_file(c->rocm_index, t);
	const char *instr = json_string_value(json_object_get(item, "instruction"));
	const char *targets = json_string_value(json_object_get(item, "target_kernel_name"));
	const char *test, *why;
	struct file *tune;

	if ((why = put_parts(task, t->kernel, NULL)))
		return why;
	test = json_string_value(json_object_get(task, "test"));
	if (!geak_bench_assigns(test, "result_gold") || !strstr(test, "torch.save("))
		return "the test part does not save result_gold";
	if ((tune = find(c->st, K_ROCM_TUNE, t->kernel->name)) &&
	    (why = put_parts(task, tune, "test_autotune")))
		return why;
	if (!instr)
		return "no instruction in ROCm_eval_complex_instruct_v1.json";
	set_str(task, "instruction", instr);
	if (targets)
		json_object_set_new(task, "target_kernels", split_names(targets));
	set_str(task, "license", license_rocm);
	return NULL;
}

/* A value as Python writes it: 8192, 0.1, (3, 5), True. */
static void
put_value(struct geak_buf *b, json_t *v)
{
	size_t i;
	json_t *item;

	if (json_is_array(v)) {
		geak_buf_puts(b, "(");
		json_array_foreach(v, i, item) {
			if (i)
				geak_buf_puts(b, ", ");
			put_value(b, item);
		}
		geak_buf_puts(b, json_array_size(v) == 1 ? ",)" : ")");
	} else if (json_is_integer(v)) {
		geak_buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	} else if (json_is_real(v)) {
		/* the shortest text that reads back as the same double */
		double d = json_real_value(v);
		char text[32];
		for (int prec = 1; prec <= 17; prec++) {
			snprintf(text, sizeof text, "%.*g", prec, d);
			if (strtod(text, NULL) == d)
				break;
		}
		geak_buf_puts(b, text);
		if (!strpbrk(text, ".eEn"))
			geak_buf_puts(b, ".0");
	} else if (json_is_boolean(v)) {
		geak_buf_puts(b, json_is_true(v) ? "True" : "False");
	} else {
		geak_buf_puts(b, "?");
	}
}

static char *
value_text(json_t *v)
{
	struct geak_buf b = {0};

	put_value(&b, v);
	return geak_buf_steal(&b);
}

/* The variables of the KernelBench instruction template: the problem as
 * read statically, with text to show for each input and init value. */
/* A file name as a title: "19_ReLU" or "my_relu" as "ReLU", "my relu". */
static char *
kb_title(const char *stem)
{
	char *clean;

	stem += strspn(stem, "0123456789");
	stem += *stem == '_';
	clean = geak_xstrdup(stem);
	for (char *c = clean; *c; c++)
		if (*c == '_')
			*c = ' ';
	for (size_t n = strlen(clean); n && clean[n - 1] == ' '; n--)
		clean[n - 1] = '\0';
	return clean;
}

/* level 0: a problem of the user's own, of no level or number. */
static json_t *
kb_vars(json_t *prob, long level, long number, const char *stem, const char *ref)
{
	static const char *const kinds[] = {"", "a single operator", "a fusion of operators",
		"a whole network"};
	json_t *vars = json_deep_copy(prob), *list, *item, *ops;
	struct geak_buf b = {0};
	char *title = kb_title(stem);
	size_t i;

	json_object_set_new(vars, "title", json_string(title));
	free(title);
	if (level >= 1 && level <= 3) {
		json_object_set_new(vars, "level", json_integer(level));
		json_object_set_new(vars, "number", json_integer(number));
		json_object_set_new(vars, "level_kind", json_string(kinds[level]));
	}
	json_object_set_new(vars, "reference", json_string(ref));
	ops = json_object_get(vars, "operators");
	json_array_foreach(ops, i, item)
		geak_buf_printf(&b, "%s`%s`", i ? ", " : "", json_string_value(item));
	json_object_set_new(vars, "operators_text", json_string(b.len ? b.data : ""));
	geak_buf_free(&b);
	list = json_object_get(vars, "inputs");
	json_array_foreach(list, i, item) {
		json_t *shape = json_object_get(item, "shape");
		struct geak_buf d = {0};
		if (json_is_string(json_object_get(item, "dtype"))) {
			geak_buf_printf(&d, "%s tensor", json_string_value(json_object_get(item, "dtype")));
			if (json_is_array(shape)) {
				char *st = value_text(shape);
				geak_buf_printf(&d, " of shape %s", st);
				free(st);
			} else {
				geak_buf_printf(&d, " made by `%s` (shape not read)",
				    json_string_value(json_object_get(item, "text")));
			}
		} else if (json_is_null(json_object_get(item, "value"))) {
			geak_buf_printf(&d, "`%s`", json_string_value(json_object_get(item, "text")));
		} else {
			char *vt = value_text(json_object_get(item, "value"));
			geak_buf_printf(&d, "the value %s", vt);
			free(vt);
		}
		json_object_set_new(item, "desc", json_string(d.data));
		geak_buf_free(&d);
	}
	list = json_object_get(vars, "init");
	json_array_foreach(list, i, item) {
		json_t *v = json_object_get(item, "value");
		char *vt = json_is_null(v) ? NULL : value_text(v);
		json_object_set_new(item, "shown", json_string(vt ? vt : "(not read)"));
		free(vt);
	}
	json_object_set_new(vars, "has_init", json_boolean(json_array_size(list) > 0));
	return vars;
}

/* 1 for an operator whose work grows faster than its inputs. */
static int
is_heavy(const char *op)
{
	static const char *const heavy[] = {"matmul", "mm", "bmm", "addmm", "baddbmm", "einsum",
		"Linear", "linear", "Bilinear", "RNN", "LSTM", "GRU", "MultiheadAttention", NULL};
	const char *last = strrchr(op, '.');

	last = last ? last + 1 : op;
	if (strncmp(last, "conv", 4) == 0 || strncmp(last, "Conv", 4) == 0 || strstr(last, "attention"))
		return 1;
	for (int k = 0; heavy[k]; k++)
		if (strcmp(last, heavy[k]) == 0)
			return 1;
	return 0;
}

/* The CPU mode's rule: a level-1 problem whose inputs were all read and
 * are small enough for the interpreter. */
static int
kb_cpu_ok(json_t *prob, long level, long limit)
{
	json_t *n = json_object_get(prob, "input_elements"), *op;
	size_t i;

	if (level != 1 || !json_is_integer(n))
		return 0;
	json_array_foreach(json_object_get(prob, "operators"), i, op)
		if (is_heavy(json_string_value(op))) {
			limit >>= KB_CPU_HEAVY_SHIFT;
			break;
		}
	return json_integer_value(n) <= limit;
}

/* The fields a KernelBench-style problem ref gives task, of the given
 * level (0: a problem of the user's own, held to no level's size rule),
 * and its instruction unless instr is given. */
static void
kb_fields(json_t *task, const char *ref, long level, long number, const char *stem,
	const char *instr, const struct opts *o)
{
	json_t *prob, *vars, *sigs;
	char *made, *err = NULL;

	prob = geak_kbprob_read(ref);
	if (json_is_integer(json_object_get(prob, "input_elements"))) {
		json_int_t n = json_integer_value(json_object_get(prob, "input_elements"));
		json_object_set(task, "input_elements", json_object_get(prob, "input_elements"));
		/* What is not a random draw is made on the host, and a job
		 * keeps a few copies of its inputs and outputs (4-byte
		 * elements) beside the interpreter's own 2 GiB. */
		if (n > 0 && n < ((json_int_t)1 << 40))
			json_object_set_new(task, "memory_mib",
			    json_integer(2048 + (KB_MEMORY_COPIES * 4 * n >> 20)));
	}
	json_object_set_new(task, "cpu_ok", json_boolean(kb_cpu_ok(prob, level ? level : 1,
	    o->cpu_elements)));
	/* What ModelNew must keep: Model's constructor and forward. */
	sigs = json_array();
	if (json_is_string(json_object_get(prob, "init_signature")))
		json_array_append(sigs, json_object_get(prob, "init_signature"));
	if (json_is_string(json_object_get(prob, "forward_signature")))
		json_array_append(sigs, json_object_get(prob, "forward_signature"));
	json_object_set_new(task, "signatures", sigs);
	if (instr) {
		set_str(task, "instruction", instr);
		json_decref(prob);
		return;
	}
	vars = kb_vars(prob, level, number, stem, ref);
	made = geak_prompt_render_file(o->prompts, "import-kernelbench.txt", vars, &err);
	json_decref(vars);
	json_decref(prob);
	if (!made)
		geak_die(GEAK_EXIT_FATAL, "import-kernelbench.txt: %s", err);
	set_str(task, "instruction", made);
	free(made);
}

/* A KernelBench task: the problem file is the reference; the harness
 * builds Model and ModelNew from it (geak-eval(1)), so there is no test
 * part. */
static const char *
fill_kb(json_t *task, const struct task *t, const struct ctx *c)
{
	const char *why, *ref = t->kernel->data;
	long level, number;
	char *name;

	if ((why = not_text(t->kernel)))
		return why;
	set_str(task, "reference", ref);
	set_str(task, "test", "");
	kb_numbers(t->kernel->name, &level, &number);
	json_object_set_new(task, "level", json_integer(level));
	set_str(task, "license", license_kb);
	name = geak_xasprintf("level%ld_%s", level, strchr(t->kernel->name, '/') + 1);
	for (char *p = name; *p; p++)
		if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9')))
			*p = '_';
	set_str(task, "name", name);
	free(name);
	if (level == 3 && c->o->kb_timeout > 0)
		json_object_set_new(task, "timeout", json_real(c->o->kb_timeout));
	if (!strstr(ref, "class Model") || !strstr(ref, "def get_inputs") ||
	    !strstr(ref, "def get_init_inputs"))
		return "not a KernelBench problem: no class Model, get_inputs or get_init_inputs";
	kb_fields(task, ref, level, number, strchr(t->kernel->name, '/') + 1, NULL, c->o);
	return NULL;
}

/* The record of one task: the task, or as much of it as was read and
 * an error saying what is wrong with the rest. */
static json_t *
build(const struct task *t, const struct ctx *c)
{
	char *id = geak_xasprintf("%s/%s", t->suite, t->kernel->name);
	json_t *rec = json_pack("{s:i, s:s, s:{s:s, s:s}}", "schema", GEAK_SCHEMA, "id", id,
	    "task", "suite", t->suite, "name", t->kernel->name);
	json_t *task;
	const char *why, *ref;

	if (!rec)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	task = json_object_get(rec, "task");
	set_str(task, "source", t->kernel->path);
	if (strcmp(t->suite, "kernelbench") == 0)
		why = fill_kb(task, t, c);
	else
		why = strcmp(t->suite, "tbg") == 0 ? fill_tbg(task, t, c) : fill_rocm(task, t, c);
	ref = json_string_value(json_object_get(task, "reference"));
	if (ref && !json_object_get(task, "signatures"))
		json_object_set_new(task, "signatures", geak_pysig_list(ref));
	if (c->cpu_ok && strcmp(t->suite, "kernelbench") != 0)
		json_object_set_new(task, "cpu_ok", json_boolean(json_object_get(c->cpu_ok, id)));
	if (why) {
		geak_warn("%s: %s: %s", t->kernel->origin, t->kernel->path, why);
		geak_set_error(rec, "import", "bad_task", "%s: %s", t->kernel->path, why);
	} else if (c->o->as_candidate) {
		char sha[65];
		geak_sha256_hex(ref, strlen(ref), sha);
		set_str(rec, "code", ref);
		set_str(rec, "code_sha", sha);
	}
	free(id);
	return rec;
}

/* ---- a task file of the user's own ---- */

/* Archives that a text file never starts with. */
static const char *const archive_magic[] = {
	"\x1f\x8b", "BZh", "\xfd" "7zXZ", "\x28\xb5\x2f\xfd", "PK\x03\x04", NULL,
};

/* 1 when path is a regular file of UTF-8 text that no archive or
 * instruction file is: a Python file of the user's own, known by its
 * first bytes (a tar header holds NUL bytes, compressed data is not
 * UTF-8). */
static int
is_own_file(const char *path)
{
	const char *base = strrchr(path, '/');
	char head[8192];
	struct stat sb;
	size_t n, cut;
	json_t *probe;
	FILE *fp;

	base = base ? base + 1 : path;
	if (strcmp(path, "-") == 0 || stat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
		return 0;
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		if (strcmp(base, named[i].name) == 0)
			return 0;
	if (!(fp = fopen(path, "rb")))
		return 0;
	n = fread(head, 1, sizeof head, fp);
	fclose(fp);
	for (int i = 0; archive_magic[i]; i++) {
		size_t m = strlen(archive_magic[i]);
		if (n >= m && memcmp(head, archive_magic[i], m) == 0)
			return 0;
	}
	if (memchr(head, '\0', n))
		return 0;
	/* The sniffed bytes may end inside a character: not held against it. */
	cut = n;
	for (size_t k = 0; k < 3 && cut > 0 && ((unsigned char)head[cut - 1] & 0xc0) == 0x80; k++)
		cut--;
	if (cut > 0 && (unsigned char)head[cut - 1] >= 0xc0)
		cut--;
	if (n < sizeof head)
		cut = n;
	if (!(probe = json_stringn(head, cut)))
		return 0;
	json_decref(probe);
	return 1;
}

/* A file name without its extension as a Python identifier: "my-op.py"
 * as "my_op". */
static char *
own_name(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;
	char *name;
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if ((dot = strrchr(base, '.')) && dot > base)
		n = (size_t)(dot - base);
	name = (n && base[0] >= '0' && base[0] <= '9') ? geak_xasprintf("t%.*s", (int)n, base)
	                                                : geak_xstrndup(base, n);
	if (!*name) {
		free(name);
		return geak_xstrdup("task");
	}
	for (char *p = name; *p; p++)
		if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9')))
			*p = '_';
	return name;
}

/* Python's own parser on the file (parsed, never run): NULL, or
 * "PATH:LINE: syntax error: what".  NULL too when no Python could be started, said once:
 * geak-eval then finds the error. */
static char *
syntax_error(const char *path)
{
	static const char script[] =
	    "import ast, sys\n"
	    "try:\n"
	    "    ast.parse(sys.stdin.buffer.read())\n"
	    "except SyntaxError as e:\n"
	    "    print('%s: syntax error: %s' % (e.lineno or 1, e.msg))\n"
	    "    sys.exit(1)\n";
	static const char *const allow[] = { "PATH", "LANG", "LC_*", NULL };
	static const char *const set[] = { "PYTHONDONTWRITEBYTECODE=1", NULL };
	static int said;
	struct geak_pyenv py;
	char **env = geak_env_build(allow, set);
	char *why = NULL;

	geak_pyenv_find(&py, NULL);
	char *argv[] = { py.python, "-I", "-S", "-c", (char *)script, NULL };
	struct geak_run r = { .spawn = { .argv = argv, .envp = env, .stdin_path = path,
		.keep_fd = -1 }, .timeout_s = 60 };
	if (geak_run(&r) < 0 || !r.exited || (r.code && r.code != 1)) {
		if (!said++)
			geak_warn("%s: the syntax was not checked: %s could not parse it (%s)", path,
			    py.python, r.errmsg[0] ? r.errmsg : "it failed");
	} else if (r.code == 1) {
		size_t n = r.out_len;
		while (n && r.out[n - 1] == '\n')
			n--;
		why = geak_xasprintf("%s:%.*s", path, (int)n, r.out);
	}
	geak_run_free(&r);
	geak_env_free(env);
	geak_pyenv_free(&py);
	return why;
}

/* The text of path, or exit naming it. */
static char *
read_text(const char *path, const char *what)
{
	size_t len;
	char *text = geak_read_file(path, &len);
	json_t *probe;

	if (!text)
		geak_die(GEAK_EXIT_FATAL, "%s: %s:", what, path);
	if (strlen(text) != len || !(probe = json_stringn(text, len)))
		geak_die(GEAK_EXIT_FATAL, "%s: %s: not UTF-8 text", what, path);
	json_decref(probe);
	return text;
}

/* The plain task's fields: the whole file is the reference, the test
 * (its inputs() or test(fn)) and, with perf_inputs(), the perf script,
 * so that the constants and helpers they share come with each. */
static void
own_plain_fields(json_t *task, const char *src, const struct geak_own *own, const char *path,
	const struct opts *o)
{
	json_t *vars;
	char *instr, *err = NULL;

	set_str(task, "entry", own->entry);
	set_str(task, "reference", src);
	set_str(task, "test", src);
	if (own->has_perf)
		set_str(task, "perf", src);
	else
		geak_warn("%s: no perf_inputs(): the task's speed will not be measured", path);
	json_object_set_new(task, "signatures", json_pack("[s]", own->signature));
	if (o->instruction) {
		set_str(task, "instruction", o->instruction);
		return;
	}
	vars = json_pack("{s:s, s:s, s:s?, s:s, s:b}", "entry", own->entry, "signature",
	    own->signature, "docstring", own->docstring, "reference", src, "has_perf", own->has_perf);
	if (!vars)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	instr = geak_prompt_render_file(o->prompts, "import-own.txt", vars, &err);
	json_decref(vars);
	if (!instr)
		geak_die(GEAK_EXIT_FATAL, "import-own.txt: %s", err);
	set_str(task, "instruction", instr);
	free(instr);
}

/* What is wrong with the starting kernel at path for this task, or NULL. */
static char *
starting_kernel_fault(const char *path, const char *code, const json_t *task)
{
	const char *suite = json_string_value(json_object_get(task, "suite"));
	const char *entry = json_string_value(json_object_get(task, "entry"));
	char *why;

	if ((why = syntax_error(path)))
		return why;
	if (strcmp(suite, "kernelbench") == 0) {
		if (!geak_own_defines(code, "class", "ModelNew"))
			return geak_xasprintf("%s: defines no class ModelNew, the starting "
			    "kernel of a KernelBench-style problem", path);
	} else if (!geak_own_defines(code, "def", entry)) {
		return geak_xasprintf("%s: defines no top-level function %s(), which the task "
		    "calls", path, entry);
	}
	return NULL;
}

/* The record of the user's file at path: the task, or the error that
 * says what the file lacks. */
static json_t *
build_own(const char *path, const struct opts *o)
{
	char *src = read_text(path, "task file"), *stem = own_name(path), *why;
	const char *name = o->name ? o->name : stem;
	struct geak_own own = {0};
	enum geak_own_form form = GEAK_OWN_NONE;
	json_t *rec, *task;

	if (!(why = syntax_error(path)) &&
	    (form = geak_own_read(src, o->entry, stem, &own)) == GEAK_OWN_NONE)
		why = geak_xasprintf("%s: %s", path, own.why);
	rec = json_pack("{s:i, s:s++, s:{s:s, s:s, s:s}}", "schema", GEAK_SCHEMA,
	    "id", form == GEAK_OWN_KERNELBENCH ? "kernelbench" : "plain", "/", name,
	    "task", "suite", form == GEAK_OWN_KERNELBENCH ? "kernelbench" : "plain",
	    "name", name, "source", path);
	if (!rec)
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	task = json_object_get(rec, "task");
	if (form == GEAK_OWN_KERNELBENCH) {
		set_str(task, "variant", "own");
		set_str(task, "reference", src);
		set_str(task, "test", "");
		kb_fields(task, src, 0, 0, stem, o->instruction, o);
		if (o->entry)
			geak_warn("%s: a KernelBench-style problem: --entry %s is not used", path,
			    o->entry);
	} else if (form == GEAK_OWN_PLAIN) {
		own_plain_fields(task, src, &own, path, o);
	}
	geak_own_free(&own);
	if (!why && o->code_path)
		why = starting_kernel_fault(o->code_path, o->code, task);
	if (!why && (o->code_path || o->as_candidate)) {
		const char *code = o->code_path ? o->code : src;
		char sha[65];
		geak_sha256_hex(code, strlen(code), sha);
		set_str(rec, "code", code);
		set_str(rec, "code_sha", sha);
		if (o->code_path)
			set_str(rec, "mode", "given");
	}
	if (why) {
		geak_warn("%s", why);
		geak_set_error(rec, "import", "bad_task", "%s", why);
		free(why);
	}
	free(src);
	free(stem);
	return rec;
}

struct own_emit {
	char **paths;
	int n, next;
	const struct opts *o;
};

static json_t *
next_own(void *arg)
{
	struct own_emit *e = arg;

	return e->next < e->n ? build_own(e->paths[e->next++], e->o) : NULL;
}

/* 1 when the sources are the user's own files; exit when they are
 * mixed with benchmarks, or the options for either are misplaced. */
static int
own_sources(char **srcs, int n, const struct opts *o)
{
	int own = 0;

	for (int i = 0; i < n; i++)
		own += is_own_file(srcs[i]);
	if (own && own < n) {
		for (int i = 0; i < n; i++)
			if (!is_own_file(srcs[i]))
				geak_warn("%s: a benchmark source, given with task files of your "
				    "own: import them apart", srcs[i]);
		exit(GEAK_EXIT_USAGE);
	}
	if (!own && (o->code_path || o->entry || o->instruction || o->name)) {
		geak_warn("--code, --entry, --instruction and --name are for a Python task "
		    "file of your own; %s is none", srcs[0]);
		exit(GEAK_EXIT_USAGE);
	}
	if (own > 1 && (o->code_path || o->entry || o->name || o->instruction)) {
		geak_warn("--code, --entry, --instruction and --name are for one task file, not %d",
		    own);
		exit(GEAK_EXIT_USAGE);
	}
	return own > 0;
}

/* Records of the user's own files.  Returns the exit status. */
static int
import_own(char **paths, int n, const struct opts *o)
{
	struct own_emit e = { paths, n, 0, o };
	struct geak_pool pool = { .source = next_own, .arg = &e };

	if (o->list) {
		for (int i = 0; i < n; i++) {
			json_t *rec = build_own(paths[i], o);
			if (printf("%s\n", json_string_value(json_object_get(rec, "id"))) < 0)
				geak_die(GEAK_EXIT_FATAL, "stdout: write failed:");
			json_decref(rec);
		}
		return geak_fshut(stdout, "stdout") < 0 ? GEAK_EXIT_FATAL : GEAK_EXIT_OK;
	}
	return geak_pool_run(&pool);
}

static const char *
want_identifier(const char *arg, const char *opt)
{
	if (!*arg || (*arg >= '0' && *arg <= '9') || strspn(arg,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != strlen(arg)) {
		geak_warn("%s: '%s' is not a Python identifier", opt, arg);
		exit(GEAK_EXIT_USAGE);
	}
	return arg;
}

static void
parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_SUITE = 256, O_DIFF, O_IDS, O_ORIG, O_CPU, O_CAND, O_VERSION, O_LEVEL,
		O_CPU_ELEM, O_L3_TIMEOUT, O_PROMPTS, O_CODE, O_ENTRY, O_INSTR, O_NAME };
	static const struct option longopts[] = {
		{"suite", required_argument, NULL, O_SUITE},
		{"difficulty", required_argument, NULL, O_DIFF},
		{"level", required_argument, NULL, O_LEVEL},
		{"cpu-elements", required_argument, NULL, O_CPU_ELEM},
		{"level3-timeout", required_argument, NULL, O_L3_TIMEOUT},
		{"prompts", required_argument, NULL, O_PROMPTS},
		{"ids", required_argument, NULL, O_IDS},
		{"original-hip", required_argument, NULL, O_ORIG},
		{"cpu-ok", required_argument, NULL, O_CPU},
		{"as-candidate", no_argument, NULL, O_CAND},
		{"code", required_argument, NULL, O_CODE},
		{"entry", required_argument, NULL, O_ENTRY},
		{"instruction", required_argument, NULL, O_INSTR},
		{"name", required_argument, NULL, O_NAME},
		{"list", no_argument, NULL, 'l'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, O_VERSION},
		{NULL, 0, NULL, 0},
	};
	int ch;

	o->suite_tbg = o->suite_rocm = o->suite_kb = o->any_difficulty = o->any_level = 1;
	o->kb_timeout = KB_LEVEL3_TIMEOUT;
	o->cpu_elements = KB_CPU_ELEMENTS;
	while ((ch = getopt_long(argc, argv, "hl", longopts, NULL)) != -1) {
		switch (ch) {
		case O_SUITE:
			o->suite_tbg = !strcmp(optarg, "tbg") || !strcmp(optarg, "all");
			o->suite_rocm = !strcmp(optarg, "rocm") || !strcmp(optarg, "all");
			o->suite_kb = !strcmp(optarg, "kernelbench") || !strcmp(optarg, "all");
			if (!o->suite_tbg && !o->suite_rocm && !o->suite_kb) {
				geak_warn("--suite: '%s' is not tbg, rocm, kernelbench or all", optarg);
				exit(GEAK_EXIT_USAGE);
			}
			break;
		case O_DIFF:
			parse_ranges(optarg, "--difficulty", 7, o->difficulty);
			o->any_difficulty = 0;
			break;
		case O_LEVEL:
			parse_ranges(optarg, "--level", 3, o->level);
			o->any_level = 0;
			break;
		case O_CPU_ELEM: o->cpu_elements = geak_parse_long(optarg, "--cpu-elements", 0, 1L << 50); break;
		case O_L3_TIMEOUT: o->kb_timeout = geak_parse_double(optarg, "--level3-timeout", 0, 86400); break;
		case O_PROMPTS: o->prompts = optarg; break;
		case O_IDS: parse_ids(optarg, o); break;
		case O_ORIG: o->original_hip = optarg; break;
		case O_CPU: o->cpu_ok_path = optarg; break;
		case O_CAND: o->as_candidate = 1; break;
		case O_CODE: o->code_path = optarg; break;
		case O_ENTRY: o->entry = want_identifier(optarg, "--entry"); break;
		case O_INSTR: o->instruction = optarg; break;
		case O_NAME: o->name = want_identifier(optarg, "--name"); break;
		case 'l': o->list = 1; break;
		case 'h': usage(stdout); exit(geak_fshut(stdout, "stdout") ? GEAK_EXIT_FATAL : GEAK_EXIT_OK);
		case O_VERSION: geak_print_version(); exit(GEAK_EXIT_OK);
		default: usage(stderr); exit(GEAK_EXIT_USAGE);
		}
	}
	o->id_used = geak_xcalloc(o->nids ? o->nids : 1, sizeof *o->id_used);
	if (optind == argc) {
		geak_warn("no benchmark source given");
		usage(stderr);
		exit(GEAK_EXIT_USAGE);
	}
}

static int
finish_own(char **paths, int n, struct opts *o)
{
	int status;

	if (o->code_path)
		o->code = read_text(o->code_path, "--code");
	status = import_own(paths, n, o);
	free(o->code);
	free(o->id_used);
	return status;
}

static void
read_sources(struct store *st, char **srcs, int n, const char *original_hip)
{
	for (int i = 0; i < n; i++) {
		st->origin = srcs[i];
		if (geak_benchsrc_read(srcs[i], want_file, take_file, st) < 0)
			exit(GEAK_EXIT_FATAL);
	}
	if (original_hip) {
		st->origin = original_hip;
		st->thunlp_only = 1;
		if (geak_benchsrc_read(original_hip, want_file, take_file, st) < 0)
			exit(GEAK_EXIT_FATAL);
		st->thunlp_only = 0;
	}
}

/* Tasks from GEAK-eval's kernel files; from thunlp's originals when the
 * sources hold no GEAK-eval TritonBench kernels at all. */
static struct task *
collect_tasks(struct store *st, size_t *n)
{
	struct task *tasks = geak_xcalloc(st->n ? st->n : 1, sizeof *tasks);
	int have_tbg = 0;

	for (size_t i = 0; i < st->n; i++)
		have_tbg |= st->files[i].kind == K_TBG;
	*n = 0;
	for (size_t i = 0; i < st->n; i++) {
		enum kind k = st->files[i].kind;
		if (k == K_TBG || (k == K_ORIG && !have_tbg))
			tasks[(*n)++] = (struct task){"tbg", &st->files[i], k == K_ORIG, 0};
		else if (k == K_ROCM)
			tasks[(*n)++] = (struct task){"rocm", &st->files[i], 0, 0};
		else if (k == K_KB)
			tasks[(*n)++] = (struct task){"kernelbench", &st->files[i], 0, 0};
	}
	qsort(tasks, *n, sizeof *tasks, cmp_task);
	return tasks;
}

/* The ids of the selected tasks, one per line. */
static int
list_ids(const struct task *tasks, size_t n, const struct ctx *c)
{
	int status = GEAK_EXIT_OK;

	for (size_t i = 0; i < n; i++)
		if (tasks[i].selected && printf("%s/%s\n", tasks[i].suite, tasks[i].kernel->name) < 0) {
			geak_warn("stdout: write failed:");
			return GEAK_EXIT_FATAL;
		}
	for (size_t j = 0; j < c->o->nids; j++)
		if (!c->o->id_used[j]) {
			geak_warn("--ids: no task '%s' in the sources", c->o->ids[j]);
			status = GEAK_EXIT_RECORDS;
		}
	return geak_fshut(stdout, "stdout") < 0 ? GEAK_EXIT_FATAL : status;
}

/* The records to write: each selected task, then one error record per
 * --ids entry that named no task. */
struct emit {
	struct task *tasks;
	size_t n, next, next_id;
	const struct ctx *c;
	long kb_tasks[4], kb_bad[4]; /* KernelBench records per level */
};

static json_t *
next_record(void *arg)
{
	struct emit *e = arg;
	const struct opts *o = e->c->o;
	json_t *rec;

	while (e->next < e->n && !e->tasks[e->next].selected)
		e->next++;
	if (e->next < e->n) {
		const struct task *t = &e->tasks[e->next++];
		rec = build(t, e->c);
		if (strcmp(t->suite, "kernelbench") == 0) {
			long level, number;
			kb_numbers(t->kernel->name, &level, &number);
			e->kb_tasks[level]++;
			e->kb_bad[level] += json_object_get(rec, "error") != NULL;
		}
		return rec;
	}
	while (e->next_id < o->nids && o->id_used[e->next_id])
		e->next_id++;
	if (e->next_id == o->nids)
		return NULL;
	const char *id = o->ids[e->next_id++];
	geak_warn("--ids: no task '%s' in the sources", id);
	if (!(rec = json_pack("{s:i, s:s}", "schema", GEAK_SCHEMA, "id", id)))
		geak_die(GEAK_EXIT_FATAL, "out of memory");
	geak_set_error(rec, "import", "no_task", "no task '%s' in the sources", id);
	return rec;
}

/* Records (or ids) of the selected tasks.  Returns the exit status. */
static int
emit_all(struct task *tasks, size_t n, const struct ctx *c)
{
	struct emit e = { tasks, n, 0, 0, c, {0}, {0} };
	struct geak_pool pool = { .source = next_record, .arg = &e };
	int status;

	if (c->o->list)
		return list_ids(tasks, n, c);
	status = geak_pool_run(&pool);
	for (int l = 1; l <= 3; l++)
		if (e.kb_tasks[l])
			fprintf(stderr, "%s: kernelbench level %d: %ld tasks, %ld with errors\n",
			    geak_prog, l, e.kb_tasks[l], e.kb_bad[l]);
	return status;
}

int
main(int argc, char **argv)
{
	struct opts o = {0};
	struct store st = {0};
	struct ctx c = {&st, NULL, NULL, NULL, NULL, &o};
	struct task *tasks;
	size_t ntasks;
	char *cpu_path;
	int status;

	geak_setprog(argv[0]);
	parse_args(argc, argv, &o);
	if (own_sources(argv + optind, argc - optind, &o))
		return finish_own(argv + optind, argc - optind, &o);
	read_sources(&st, argv + optind, argc - optind, o.original_hip);
	c.tbg_index = index_instructions(&st, K_TBG_INSTR);
	c.rocm_index = index_instructions(&st, K_ROCM_INSTR);
	c.orig_index = index_instructions(&st, K_ORIG_META);
	add_thunlp_instructions(&st, c.tbg_index, c.orig_index);
	cpu_path = o.cpu_ok_path ? geak_xstrdup(o.cpu_ok_path)
	                         : geak_share_path(NULL, "bench", "cpu-ok.txt");
	c.cpu_ok = load_cpu_ok(cpu_path);
	if (!c.cpu_ok && o.cpu_ok_path)
		geak_die(GEAK_EXIT_FATAL, "%s:", o.cpu_ok_path);
	tasks = collect_tasks(&st, &ntasks);
	if (ntasks == 0)
		geak_die(GEAK_EXIT_FATAL, "no benchmark kernel files in the sources");
	select_tasks(tasks, ntasks, c.tbg_index, &o);
	status = emit_all(tasks, ntasks, &c);

	free(tasks);
	free(cpu_path);
	json_decref(c.tbg_index);
	json_decref(c.rocm_index);
	json_decref(c.orig_index);
	json_decref(c.cpu_ok);
	store_free(&st);
	for (size_t i = 0; i < o.nids; i++)
		free(o.ids[i]);
	free(o.ids);
	free(o.id_used);
	return status;
}
