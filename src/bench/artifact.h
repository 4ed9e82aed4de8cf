/* artifact.h — an artifact named on a command line: where it is (a path, or a saved baseline's name) and which
 * catalog goes with it (the one given, else the one its suite named, looked for again where the artifact's
 * redacted path says). Library code: nothing is printed; the command words the outcomes. */
#ifndef PLUMB_BENCH_ARTIFACT_H
#define PLUMB_BENCH_ARTIFACT_H

#include <stdbool.h>

#include "base/err.h"
#include "bench/baseline.h"
#include "bench/config.h"
#include "bench/evidence.h"

/* Where an artifact argument points. It is a path when it names an existing file, holds a '/', ends in ".json"
 * or when baselines are not looked up (!may_be_baseline); else it is a baseline's name. OK with *path malloc'd
 * (the caller frees it); BAD_NAME when it is neither; NO_HOME; MISSING with *path naming the file looked for;
 * ERROR when out of memory. */
enum bench_baseline_status bench_artifact_locate(const char *arg, bool may_be_baseline, char **path);

/* Reads the artifact at path (bench_artifact_locate's): a file of the baseline store under the store's trust
 * rule (bench_baseline_read), any other path as bench_evidence_read does. */
enum plumb_err bench_artifact_read(const char *path, struct bench_evidence *ev, struct perr *e);

/* Where a catalog came from. */
enum bench_catalog_source {
	BENCH_CATALOG_NONE,     /* none given, and the artifact's suite named none */
	BENCH_CATALOG_GIVEN,    /* the path given (--catalog) */
	BENCH_CATALOG_SUITES,   /* the one the artifact's suite named */
	BENCH_CATALOG_GONE,     /* the artifact's suite named one that is no longer there (its stored path is
				 * ev->catalog_path) */
};

/* Loads the catalog for ev: opt_path when given (a missing file is an error), else the artifact's own when it is
 * still readable. *src says which; *cat holds a catalog (release it) only for GIVEN and SUITES. Errors: those of
 * bench_catalog_load, PLUMB_ENOMEM. ev may be NULL (only opt_path counts then). */
enum plumb_err bench_catalog_for(const char *opt_path, const struct bench_evidence *ev, struct bench_catalog *cat,
				 enum bench_catalog_source *src, struct perr *e);

#endif
