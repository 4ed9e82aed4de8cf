/* prom.h — Prometheus' text exposition format (version 0.0.4), as a Pushgateway takes it: metric families with
 * their # HELP and # TYPE lines, samples with labels, and the grouping-key path of a push. Everything that comes
 * from data goes through here: metric and label names are sanitised to Prometheus' rules, every label value passes
 * through the redactor (base/redact.h), is made valid UTF-8 and escaped, so the text is always accepted and never
 * carries a secret. The caller owns the sbuf it writes into; nothing here allocates beyond it. */
#ifndef PLUMB_OS_PROM_H
#define PLUMB_OS_PROM_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "base/sbuf.h"

/* Appends name made a legal metric name, [a-zA-Z_:][a-zA-Z0-9_:]*: every other byte becomes '_', a leading digit
 * gets a '_' before it, an empty name reads "_". */
void prom_metric_name(struct sbuf *out, const char *name);
/* The same for a label name, [a-zA-Z_][a-zA-Z0-9_]* (no ':'); a result beginning "__" (reserved for Prometheus'
 * own labels) gets an 'x' in front. */
void prom_label_name(struct sbuf *out, const char *name);
/* Appends value redacted, as valid UTF-8 (other bytes become '?'), with '\\', '"' and a newline escaped: the text
 * between the quotes of a label value. */
void prom_label_value(struct sbuf *out, const char *value);
/* The redacted, UTF-8-checked form of value without the escapes (what Prometheus will store), for a grouping
 * key that must equal the label in the body. */
void prom_label_text(struct sbuf *out, const char *value);

/* One label of a sample: a name (sanitised when written) and a value (NULL or "" means absent: Prometheus treats
 * an empty label as none, so it is left out). */
struct prom_label {
	const char *name;
	const char *value;
};

/* Starts a family: "# HELP name help" and "# TYPE name type" (type "gauge", "counter", "untyped"). The samples of
 * a family must follow it before the next begins (the format forbids interleaving). */
void prom_family(struct sbuf *out, const char *name, const char *type, const char *help);
/* One sample line: name{labels} value. Labels whose sanitised name repeats an earlier one are dropped (a sample
 * with a label twice is refused whole by Prometheus). NaN and infinities are written as the format spells them. */
void prom_sample(struct sbuf *out, const char *name, const struct prom_label *labels, size_t nlabels, double value);

/* Appends "/metrics/job/JOB" (JOB is the caller's own plain name) and "/NAME/VALUE" for each label of the grouping key to out: a value that is not
 * plain (letters, digits, '-', '_', '.') or is empty is written as NAME@base64/BASE64URL, as the Pushgateway reads
 * it. Values go through prom_label_text, so they equal the labels the body carries. */
void prom_grouping_path(struct sbuf *out, const char *job, const struct prom_label *key, size_t nkey);

/* Whether s is a legal label name as it is (for checking a --label a user gave). */
bool prom_is_label_name(const char *s);

/* The content type of the text format, for the request that carries it. */
#define PROM_TEXT_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* PUTs body to base_url + path (base_url without a trailing '/' is the gateway's root, e.g.
 * http://127.0.0.1:9091): the group of the grouping key is replaced whole. os/http.h's codes. */
enum plumb_err prom_push(const char *base_url, const char *path, const struct sbuf *body, struct perr *e);

#endif
