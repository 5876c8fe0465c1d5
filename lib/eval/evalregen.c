/*
 * evalregen.c: the outputs of a profile that came without them (an
 * imported calibration) made again, from its recorded seeds and choices,
 * by the harness's "regenerate" job.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "eval/evaljob.h"
#include "eval/evalregen.h"
#include "eval/harness.h"
#include "record.h"
#include "util.h"

int
geak_calib_wants_outputs(json_t *profile, const char *dir)
{
	char *path;
	struct stat st;
	int missing;

	if (!json_is_true(json_object_get(profile, GEAK_PROF_OK)))
		return 0;
	path = geak_xasprintf("%s/profile.pt", dir);
	missing = lstat(path, &st) < 0 && errno == ENOENT;
	free(path);
	return missing;
}

/* The file path readable as the rest of dir is: where the harness opened
 * dir to the group of the jobs' uid (the judge reads the profile as it),
 * a file added later is opened to it too. */
static int
share_as_dir(const char *path, const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		return -1;
	if (st.st_gid == getegid())
		return 0;
	return chown(path, (uid_t)-1, st.st_gid) < 0 || chmod(path, 0640) < 0 ? -1 : 0;
}

/* name of the job's folder from, copied to dir/name through a temporary
 * file renamed into place; 0, or -1 with err set. */
static int
take_file(const char *from, const char *name, const char *dir, unsigned long long cap, char *err,
    size_t errlen)
{
	char *path = geak_xasprintf("%s/%s", dir, name);
	char *tmp = geak_xasprintf("%s.%ld.tmp", path, (long)getpid());
	int e = geak_job_copy(from, name, tmp, cap);

	if (!e && (share_as_dir(tmp, dir) < 0 || rename(tmp, path) < 0))
		e = errno;
	if (e == ENOENT)
		snprintf(err, errlen, "the job left no %s", name);
	else if (e)
		snprintf(err, errlen, "%s cannot be kept in %s: %s", name, dir, geak_untrusted_why(e));
	if (e)
		unlink(tmp);
	free(path), free(tmp);
	return e ? -1 : 0;
}

int
geak_calib_regenerate(struct geak_cand *c, json_t *refspec, const char *dir, char *err, size_t errlen)
{
	const struct geak_evalcfg *cfg = c->slot->cfg;
	char *tmp, nonce[33];
	struct geak_budget b = geak_budget(c);
	struct geak_jobreq job;
	json_t *extra, *res;
	int r = -1;

	if (!json_is_object(refspec)) {
		snprintf(err, errlen, "no spec");
		return -1;
	}
	tmp = geak_job_dir(cfg, "regen-");
	geak_job_dump(refspec, tmp, GEAK_FILE_JOB);
	geak_nonce(nonce);
	extra = json_pack("{s:f, s:O, s:f, s:f, s:s}", GEAK_REQ_RUN_BUDGET, b.calib_run_s,
	    GEAK_REQ_PERF, json_object_get(refspec, GEAK_JOB_PERF_CHECKED), GEAK_REQ_TIMEOUT,
	    b.regen_s, GEAK_REQ_COMPILE, b.compile_s, GEAK_REQ_PROFILE, dir);
	job = (struct geak_jobreq){ GEAK_OP_REGENERATE, tmp, nonce, extra, err, errlen };
	res = geak_job_answer(c, GEAK_W_RUN, GEAK_GPU_SHARED, &job, GEAK_FILE_REGEN,
	    "the regeneration wrote no result");
	json_decref(extra);
	if (res && !json_is_true(json_object_get(res, GEAK_PROF_OK))) {
		const char *msg = geak_get_str(res, GEAK_PROF_ERROR);
		snprintf(err, errlen, "%s", msg ? msg : "the outputs could not be made again");
	} else if (res) {
		r = take_file(tmp, GEAK_FILE_PROFILE_PT, dir, (unsigned long long)cfg->file_limit_mib << 20,
		    err, errlen);
	}
	json_decref(res);
	geak_job_drop(cfg, tmp);
	return r;
}

void
geak_calib_discard(const char *base, const char *key)
{
	char *dir = geak_xasprintf("%s/%s", base, key);
	char *aside = geak_xasprintf("%s/discard-%s.%ld", base, key, (long)getpid());

	if (rename(dir, aside) == 0)
		geak_rmtree(aside);
	free(dir), free(aside);
}

