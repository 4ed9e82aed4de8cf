/* load.c — from a path to a hot summary: sniff the content, read a summary as it is or read a profile and
 * analyze it (with stage slices when asked). Shared by `plumb hot` and `plumb diff`. */
#include "analyze/analyze.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"
#include "format/hot_json.h"

/* Formats whose samples carry times. */
static bool format_has_times(enum fmt_kind k)
{
	return k == FMT_GECKO || k == FMT_PERF_SCRIPT || k == FMT_SPEEDSCOPE || k == FMT_CPUPROFILE ||
	       k == FMT_CHROME_TRACE || k == FMT_GECKO_RAW;
}

enum plumb_err hot_summary_from_file(const char *path, const struct hot_load_opts *lo, const struct hot_opts *o,
				     struct hot_summary **out, struct perr *e)
{
	struct fmt_source in;
	enum plumb_err rc = fmt_source_open(&in, path, e);
	if (rc) {
		fmt_source_close(&in);
		return rc;
	}
	enum fmt_kind kind = in.kind;
	struct hot_summary *s = NULL;
	struct profile *p = NULL;
	struct fmt_stage *stages = NULL;
	size_t nstages = 0;
	if (kind == FMT_HOT_JSON) {
		if (lo && lo->stages_path) {
			rc = perr_set(e, PLUMB_EINVAL,
				      "%s is a hot summary, not a profile: it cannot be sliced by stages; pass the profile", path);
			goto out;
		}
		const char *text;
		size_t len;
		if (!(rc = fmt_source_document(&in, &text, &len, e)))
			rc = fmt_hot_json_read(text, len, &s, e);
		goto out;
	}
	if (lo && lo->stages_path) {
		if (!format_has_times(kind)) {
			rc = perr_set(e, PLUMB_EINVAL,
				      "%s is a %s profile, which has no sample times, so it cannot be sliced by stages; "
				      "record to a Firefox Profiler file (-o profile.json) to keep them",
				      path, fmt_name(kind));
			goto out;
		}
		if ((rc = fmt_stages_load(lo->stages_path, &stages, &nstages, e)))
			goto out;
	}
	struct fmt_read_opts ro = { 0 };
	ro.syms_path = lo ? lo->syms_path : NULL;
	ro.sample_index = lo ? lo->sample_index : NULL;
	ro.source_path = path;
	ro.keep_timeline = stages != NULL;
	/* folded text is read as flamegraph.pl reads it: lines that are not "stack COUNT" skipped, in one warning */
	ro.lenient = true;
	/* what it skipped: a recording cut short, its other events; a Chrome trace's chunks written without data;
	 * folded lines */
	if ((kind == FMT_PERF_DATA || kind == FMT_CHROME_TRACE || kind == FMT_CPUPROFILE || kind == FMT_FOLDED) && o) {
		ro.warn = o->warn;
		ro.warn_ctx = o->warn_ctx;
	}
	if ((rc = fmt_source_read(&in, kind, &ro, &p, e)))
		goto out;
	if ((rc = hot_analyze(p, o, &s, e)))
		goto out;
	if (stages) {
		if (!profile_has_times(p)) {
			rc = perr_set(e, PLUMB_EINVAL, "%s has samples without times, so it cannot be sliced by stages", path);
			goto out;
		}
		if ((rc = hot_analyze_stages(p, o, stages, nstages, s, e)))
			goto out;
	}
	if (!hot_summary_set_origin(s, path, fmt_name(kind)))
		rc = perr_set(e, PLUMB_ENOMEM, "out of memory");
out:
	/* a message about the --stages or --syms file names that file, not the profile */
	if (rc && e->msg[0] && !strstr(e->msg, path) &&
	    !(lo && ((lo->syms_path && strstr(e->msg, lo->syms_path)) ||
		     (lo->stages_path && strstr(e->msg, lo->stages_path))))) {
		char tmp[PERR_MSG_MAX];
		snprintf(tmp, sizeof tmp, "%s: %s", path, e->msg);
		memcpy(e->msg, tmp, sizeof tmp);
	}
	if (rc) {
		hot_summary_free(s);
		s = NULL;
	}
	fmt_stages_free(stages, nstages);
	profile_free(p);
	fmt_source_close(&in);
	*out = s;
	return rc;
}
