/* cxxname.h — reading demangled C++ (and Rust) names as names, not as text: the short label
 * `ns::Class::method` of `void ns::Class<int>::method(int const&) const` (no return type, no parameter list, no
 * trailing qualifiers, long template argument lists as `<...>`), and its scope, the `::` components above the
 * function, which `hot --group-by module` groups by (docs/design.md §4.1). Brackets (<> () [] {}) nest; an
 * operator's own symbol (`operator<<`, `operator()`) is never taken for one. A name that is not C++-shaped (a C
 * function, a Python or Go name) is its own short form.
 *
 * Nothing here allocates except the output buffer. */
#ifndef PLUMB_PROFILE_CXXNAME_H
#define PLUMB_PROFILE_CXXNAME_H

#include <stdbool.h>
#include <stddef.h>

#include "base/sbuf.h"

/* The length of name without a symbol version ("clock_gettime@@GLIBC_2.17", "memcpy@GLIBC_2.2.5": an '@' or "@@"
 * then an uppercase version name), as perf script prints names; len when it has none ("memcpy@plt" has none). */
size_t label_unversioned_len(const char *name, size_t len);
/* Appends the short form of name[0..len) to out. */
void label_cxx_short_name(struct sbuf *out, const char *name, size_t len);
/* True when label_cxx_short_name would change name (it has a parameter list, a return type or long template
 * arguments). */
bool label_cxx_name_is_long(const char *name, size_t len);
/* The scope of a short name (label_cxx_short_name's output) up to `depth` components, never the function itself: the
 * length of its prefix "ns::Class" (0 when the name has no scope); *ncomp gets how many components the name has
 * (the function included). */
size_t label_cxx_scope_prefix(const char *name, size_t len, int depth, size_t *ncomp);

#endif
