/* Unit tests of knowledge packs: which files make a pack's text, the
 * override directory, refused names, and the GPU-to-pack mapping.  The
 * wrapper sets GEAK_SHAREDIR to the repository's share/. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "gpu.h"
#include "knowledge.h"
#include "util.h"

static void
pack_is_rules_then_target(void **state)
{
	char err[300], *used, *text;

	(void)state;
	text = geak_knowledge_load("h100", NULL, &used, err, sizeof err);
	assert_non_null(text);
	assert_string_equal(used, "h100");
	assert_true(strncmp(text, "# Triton optimisation rules", 27) == 0);
	assert_non_null(strstr(text, "\n# Target: NVIDIA H100"));
	assert_null(strstr(text, "MI300X"));
	free(text);
	free(used);
	text = geak_knowledge_load("triton", NULL, NULL, err, sizeof err);
	assert_non_null(text);
	assert_null(strstr(text, "# Target:"));
	free(text);
}

static void
every_shipped_pack_loads(void **state)
{
	static const char *const packs[] = { "mi300x", "mi250", "h100", "h200", "generic", NULL };
	char err[300];

	(void)state;
	for (int i = 0; packs[i]; i++) {
		char *text = geak_knowledge_load(packs[i], NULL, NULL, err, sizeof err);
		assert_non_null(text);
		assert_non_null(strstr(text, "# Target:"));
		free(text);
	}
}

static void
bad_names_and_missing_packs(void **state)
{
	char err[300], *used = (char *)"x";

	(void)state;
	assert_null(geak_knowledge_load("../../etc/passwd", NULL, &used, err, sizeof err));
	assert_null(used);
	assert_non_null(strstr(err, "a name is"));
	assert_null(geak_knowledge_load(".hidden", NULL, NULL, err, sizeof err));
	assert_null(geak_knowledge_load("H100", NULL, NULL, err, sizeof err));
	assert_null(geak_knowledge_load("b200", NULL, NULL, err, sizeof err));
	assert_non_null(strstr(err, "knowledge pack 'b200': no b200.md"));
}

static void
override_directory(void **state)
{
	char dir[] = "/tmp/geak-knowledge.XXXXXX", err[300], *path, *text, *used;
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	path = geak_xasprintf("%s/mine.md", dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("# Target: my own GPU", fp);  /* no final newline: one is added */
	fclose(fp);
	/* A pack only the override has; triton.md comes from share/. */
	text = geak_knowledge_load("mine", dir, &used, err, sizeof err);
	assert_non_null(text);
	assert_true(strncmp(text, "# Triton optimisation rules", 27) == 0);
	assert_non_null(strstr(text, "\n\n# Target: my own GPU\n"));
	free(text);
	free(used);
	/* The same through the environment. */
	setenv("GEAK_KNOWLEDGE", dir, 1);
	text = geak_knowledge_load("mine", NULL, NULL, err, sizeof err);
	assert_non_null(text);
	free(text);
	unsetenv("GEAK_KNOWLEDGE");
	assert_null(geak_knowledge_load("mine", NULL, NULL, err, sizeof err));
	unlink(path);
	rmdir(dir);
	free(path);
}

static const char *
pack_for(const char *arch, const char *name)
{
	json_t *gpu = json_pack("{s:s?, s:s?}", "arch", arch, "name", name);
	const char *pack = geak_knowledge_pack_for(gpu);

	json_decref(gpu);
	return pack;
}

static void
gpu_to_pack(void **state)
{
	(void)state;
	assert_string_equal(pack_for("gfx942", "AMD Instinct MI300X"), "mi300x");
	assert_string_equal(pack_for("gfx90a", "AMD Instinct MI250X/MI250"), "mi250");
	assert_string_equal(pack_for("sm_90", "NVIDIA H200"), "h200");
	assert_string_equal(pack_for("sm_90", "NVIDIA H100 80GB HBM3"), "h100");
	assert_string_equal(pack_for("sm_80", "NVIDIA A100-SXM4-80GB"), "generic");
	assert_string_equal(pack_for(NULL, "mystery"), "generic");
}

static void
auto_follows_the_first_gpu(void **state)
{
	char err[300], *used, *text;
	json_t *gpus;
	const char *want = "generic";

	(void)state;
	if (geak_gpu_list(&gpus, err, sizeof err) == 0) {
		if (json_array_size(gpus) > 0)
			want = geak_knowledge_pack_for(json_array_get(gpus, 0));
		text = geak_knowledge_load("auto", NULL, &used, err, sizeof err);
		assert_non_null(text);
		assert_string_equal(used, want);
		free(text);
		free(used);
		json_decref(gpus);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pack_is_rules_then_target),
		cmocka_unit_test(every_shipped_pack_loads),
		cmocka_unit_test(bad_names_and_missing_packs),
		cmocka_unit_test(override_directory),
		cmocka_unit_test(gpu_to_pack),
		cmocka_unit_test(auto_follows_the_first_gpu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
