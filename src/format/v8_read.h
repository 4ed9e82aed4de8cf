/* v8_read.h — what V8's readers share (format/v8_read.c, format/v8_heap_read.c): the reader's state, its errors,
 * callFrames as frames, and the document as a jansson tree. Internal to format/. */
#ifndef PLUMB_FORMAT_V8_READ_H
#define PLUMB_FORMAT_V8_READ_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "format/format.h"

struct v8_reader {
	struct profile *p;
	struct perr *e;
	const char *what;        /* "malformed Chrome CPU profile" */
	bool failed;
	const struct fmt_read_opts *opts;
	size_t orphans;          /* nodes whose parent is not in the profile */
	size_t lost_samples;     /* samples of nodes not in the profile */
};

/* PLUMB_EFORMAT "WHAT: REASON" (the first failure only); false. */
bool v8_fail(struct v8_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool v8_nomem(struct v8_reader *r);
/* A node id (a non-negative integer) from v. */
bool v8_id_of(const json_t *v, uint64_t *out);
/* The frame DevTools names for a callFrame (or an old-format node): "(anonymous)" for no name, V8's 0-based line
 * made 1-based; *is_root_name when the name is "(root)". PROFILE_NOMEM when out of memory. */
uint32_t v8_frame_of(struct v8_reader *r, const json_t *cf, bool *is_root_name);
/* One V8 format: what its failures start with ("malformed Chrome trace"), what it does with the document's tree
 * (false on failure, v8_fail or v8_nomem said why), the profile's backend and weight unit. */
struct v8_format {
	const char *what;
	bool (*doc)(struct v8_reader *r, json_t *root);
	const char *backend, *unit;
};
/* Parses the document in buf and gives its tree to f->doc with a reader of p; then warns of orphan nodes and
 * sets the profile's backend and weight unit. */
enum plumb_err v8_read_doc(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
			   struct perr *e, const struct v8_format *f);
/* Defines the reader `name` that format.h declares for the format f. */
#define V8_READER(name, f)                                                                                          \
	enum plumb_err name(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,         \
			    struct perr *e)                                                                          \
	{                                                                                                            \
		return v8_read_doc(buf, len, opts, p, e, &(f));                                                      \
	}

#endif
