/* redact.h — the one redactor every output label, path and command line passes through (docs/design.md §3.6).
 * Credentials and exfiltration-shaped URL parts become "[REDACTED]"; the home-directory prefix is dropped.
 * Only the secret is replaced: what surrounds it stays. Three forms: text (command lines, messages, process and
 * thread names, JIT names), paths (a file or module path: a key's value there ends at the next '/') and code
 * (a function name: a symbol is code, not a secret, so an identifier that merely starts like a vendor token —
 * ghp_init, aws_AKIA..._fn — is kept; a URL with credentials, a key=value or a JWT in a frame's name is still
 * data). profile/label.h renders a frame with each part redacted as what it is. */
#ifndef PLUMB_BASE_REDACT_H
#define PLUMB_BASE_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/sbuf.h"

#define REDACTED "[REDACTED]"

/* Appends the redacted form of in[0..len) to out. */
void redact_append(struct sbuf *out, const char *in, size_t len);
/* Appends the redacted form of in[0..len) to out as a JSON string (sbuf_add_json_text: always valid JSON). */
void redact_add_json(struct sbuf *out, const char *in, size_t len);
/* Returns a malloc'd redacted copy of s (caller frees), or NULL when out of memory. */
char *redact_dup(const char *s);
/* A function name (see above): "ghp_init" stays, "connect https://u:pw@h/x" loses its credentials. */
void redact_code_append(struct sbuf *out, const char *in, size_t len);
/* The same for a path: "a/token=ghp_x/b.c" becomes "a/token=[REDACTED]/b.c". */
void redact_path_append(struct sbuf *out, const char *in, size_t len);
char *redact_path_dup(const char *s);
/* The same for a message to a person: a path under the home directory reads "~/.local/state/plumb/x.json" (its
 * home prefix written as "~/", not dropped, so it does not read as a relative path). */
char *redact_dup_message(const char *s);
/* Whether a name holds a credential as its value ("token", "api_key", "DB_PASSWORD", "db_pw"): the names whose
 * "=value" the redactor replaces, for a caller holding a key and its value apart (a bench sample's tags). */
bool redact_is_secret_key(const char *name, size_t n);
/* Overrides the home directory used for prefix dropping (NULL: use $HOME). For tests. */
void redact_set_home(const char *home);

#endif
