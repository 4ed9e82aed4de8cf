/* redact.h — the one redactor every output label, path and command line passes through (docs/design.md §3.6).
 * Credentials and exfiltration-shaped URL parts become "[REDACTED]"; the home-directory prefix is dropped.
 * Ordinary labels (function names, source paths, C++ templates) come out unchanged. */
#ifndef PLUMB_BASE_REDACT_H
#define PLUMB_BASE_REDACT_H

#include <stddef.h>

#include "base/sbuf.h"

#define REDACTED "[REDACTED]"

/* Appends the redacted form of in[0..len) to out. */
void redact_append(struct sbuf *out, const char *in, size_t len);
/* Appends the redacted form of in[0..len) to out as a JSON string (sbuf_add_json_text: always valid JSON). */
void redact_add_json(struct sbuf *out, const char *in, size_t len);
/* Returns a malloc'd redacted copy of s (caller frees), or NULL when out of memory. */
char *redact_dup(const char *s);
/* The same for a message to a person: a path under the home directory reads "~/.local/state/plumb/x.json" (its
 * home prefix written as "~/", not dropped, so it does not read as a relative path). */
char *redact_dup_message(const char *s);
/* Overrides the home directory used for prefix dropping (NULL: use $HOME). For tests. */
void redact_set_home(const char *home);

#endif
