/* json_tree.c — builds jansson trees from the pull reader's tokens. Recursion follows the input's nesting,
 * which the reader caps, so the C stack is bounded; a failed build frees whatever it had built. */
#include "base/json_tree.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/readall.h"
#include "base/utf8.h"

struct builder {
	struct json_reader *j;
	int flags;
	struct sbuf text; /* the string being decoded */
};

/* Decodes the string at the cursor into b->text; checks what jansson requires of a string. */
static bool read_text(struct builder *b)
{
	sbuf_reset(&b->text);
	const char *at = b->j->p;
	if (!jr_string(b->j, &b->text, NULL, NULL, NULL))
		return false;
	const char *s = b->text.buf;
	bool nul = memchr(s, '\0', b->text.len) != NULL;
	if (nul || !utf8_valid(s, b->text.len)) {
		b->j->p = at;
		return jr_fail(b->j, nul ? "\\u0000 in a string" : "a string that is not valid UTF-8");
	}
	return true;
}

/* An integer as jansson keeps it; false when it does not fit in json_int_t. */
static bool parse_int(const char *s, size_t n, json_int_t *out)
{
	bool neg = n && s[0] == '-';
	unsigned long long v = 0, lim = neg ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX;
	for (size_t i = neg; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (lim - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = neg ? (json_int_t)(0 - v) : (json_int_t)v;
	return true;
}

static json_t *build(struct builder *b);

static json_t *build_object(struct builder *b)
{
	struct json_reader *j = b->j;
	json_t *o = json_object();
	if (!o) {
		jr_oom(j);
		return NULL;
	}
	if (!jr_obj_begin(j))
		goto fail;
	bool first = true;
	const char *k;
	size_t kl;
	int r;
	while ((r = jr_obj_next(j, &first, &k, &kl)) == 1) {
		if (!utf8_valid(k, kl) || memchr(k, '\0', kl)) {
			jr_fail(j, "a key that is not valid UTF-8 or holds \\u0000");
			goto fail;
		}
		/* the key points into the text or the reader's scratch: keep a copy while the value is read */
		char *key = strndup(k, kl);
		if (!key) {
			jr_oom(j);
			goto fail;
		}
		if ((b->flags & JR_TREE_NO_DUPLICATES) && json_object_getn(o, key, kl)) {
			free(key);
			jr_fail(j, "a duplicate key");
			goto fail;
		}
		json_t *v = build(b);
		if (!v) {
			free(key);
			goto fail;
		}
		int rc = json_object_setn_new_nocheck(o, key, kl, v);
		free(key);
		if (rc != 0) {
			jr_oom(j);
			goto fail;
		}
	}
	if (r == 0)
		return o;
fail:
	json_decref(o);
	return NULL;
}

static json_t *build_array(struct builder *b)
{
	struct json_reader *j = b->j;
	json_t *a = json_array();
	if (!a) {
		jr_oom(j);
		return NULL;
	}
	if (!jr_arr_begin(j))
		goto fail;
	bool first = true;
	int r;
	while ((r = jr_arr_next(j, &first)) == 1) {
		json_t *v = build(b);
		if (!v)
			goto fail;
		if (json_array_append_new(a, v) != 0) {
			jr_oom(j);
			goto fail;
		}
	}
	if (r == 0)
		return a;
fail:
	json_decref(a);
	return NULL;
}

static json_t *build_number(struct builder *b)
{
	struct json_reader *j = b->j;
	const char *at = (jr_ws(j), j->p), *text;
	size_t len;
	bool integer;
	double d;
	if (!jr_number_span(j, &d, &text, &len, &integer))
		return NULL;
	json_t *v;
	if (integer) {
		json_int_t x;
		if (!parse_int(text, len, &x) && (b->flags & JR_TREE_BIG_AS_REAL) && isfinite(d)) {
			v = json_real(d);
			goto made;
		}
		if (!parse_int(text, len, &x)) {
			j->p = at;
			jr_fail(j, "an integer out of range");
			return NULL;
		}
		v = json_integer(x);
	} else {
		if (!isfinite(d)) {
			j->p = at;
			jr_fail(j, "a number out of range");
			return NULL;
		}
		v = json_real(d);
	}
made:
	if (!v)
		jr_oom(j);
	return v;
}

static json_t *build(struct builder *b)
{
	struct json_reader *j = b->j;
	json_t *v = NULL;
	bool flag;
	switch (jr_peek(j)) {
	case '{': return build_object(b);
	case '[': return build_array(b);
	case '"':
		if (!read_text(b))
			return NULL;
		v = json_stringn_nocheck(b->text.buf, b->text.len);
		break;
	case 't':
	case 'f':
		if (!jr_bool(j, &flag))
			return NULL;
		v = json_boolean(flag);
		break;
	case 'n':
		if (!jr_lit(j, "null", 4))
			return NULL;
		v = json_null();
		break;
	case -1: jr_fail(j, "unexpected end of input"); return NULL;
	case '-':
	case '0' ... '9': return build_number(b);
	default: jr_fail(j, "expected a value"); return NULL;
	}
	if (!v)
		jr_oom(j);
	return v;
}

json_t *jr_tree(struct json_reader *j, int flags)
{
	struct builder b = { j, flags, SBUF_INIT };
	json_t *v = build(&b);
	sbuf_release(&b.text);
	return v;
}

json_t *jr_parse(const char *buf, size_t len, int flags, struct jr_error *err)
{
	struct json_reader j;
	jr_init(&j, buf, len, NULL, NULL);
	json_t *v = jr_tree(&j, flags);
	if (v && !(flags & JR_TREE_FIRST_VALUE) && !jr_at_end(&j)) {
		jr_fail(&j, "trailing data after the document");
		json_decref(v);
		v = NULL;
	}
	if (!v && err)
		*err = j.err;
	jr_release(&j);
	return v;
}

json_t *jr_parse_file(const char *path, const char *what, size_t max, int flags, struct jr_error *err,
		      struct perr *e)
{
	char *buf = NULL;
	size_t len = 0;
	struct perr re = PERR_INIT;
	enum plumb_err rc = read_input(path, what, max, &buf, &len, &re);
	if (rc) {
		if (err) {
			memset(err, 0, sizeof *err);
			err->code = rc;
			snprintf(err->text, sizeof err->text, "%s", re.msg);
		}
		if (e)
			perr_set(e, rc, "%s", re.msg);
		return NULL;
	}
	json_t *v = jr_parse(buf, len, flags, err);
	free(buf);
	return v;
}
