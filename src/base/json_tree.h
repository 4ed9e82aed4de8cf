/* json_tree.h — small JSON documents (summaries, stage files, metrics recordings, bench samples, speedscope) as
 * jansson trees, tokenized by the one reader (base/json.h): they get its caps (JR_MAX_DEPTH, JR_MAX_STRING) and
 * its byte/line/column error positions. The tree follows jansson's rules: a number written without fraction or
 * exponent is an integer (out of range of json_int_t is an error), strings must be valid UTF-8 without NUL, and
 * a repeated key keeps its last value unless JR_TREE_NO_DUPLICATES. The caller owns every tree it gets
 * (json_decref). */
#ifndef PLUMB_BASE_JSON_TREE_H
#define PLUMB_BASE_JSON_TREE_H

#include <jansson.h>

#include "base/json.h"

enum {
	JR_TREE_NO_DUPLICATES = 1, /* a key twice in one object is an error */
	JR_TREE_FIRST_VALUE = 2,   /* jr_parse: read the first value only; what follows it is not looked at */
	JR_TREE_BIG_AS_REAL = 4,   /* an integer beyond json_int_t is a real (trace files carry 64-bit ids) */
};

/* Reads the value at the reader's cursor into a new tree; NULL when the reader failed (its message says why). */
json_t *jr_tree(struct json_reader *j, int flags);

/* Parses buf[0..len) (one value, white space around it) into a new tree; NULL on error with *err filled. */
json_t *jr_parse(const char *buf, size_t len, int flags, struct jr_error *err);

/* The same for the content of the input file path, read under the input rule of base/readall.h as a `what` of
 * at most max bytes. When the file cannot be read, err->line is 0, err->code is read_input's code (PLUMB_ENOENT
 * when the file is not there, PLUMB_EFORMAT for a device, a FIFO that gives nothing, a file over the cap,
 * PLUMB_EIO when it cannot be read: docs/design.md §3.2) and e (when not NULL) holds the one-line message naming
 * the file; err->text the same, cut to fit. */
json_t *jr_parse_file(const char *path, const char *what, size_t max, int flags, struct jr_error *err,
		      struct perr *e);

#endif
