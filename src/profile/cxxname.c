/* cxxname.c — demangled names read by their brackets (cxxname.h). One forward scan knows the bracket depth at
 * each byte and skips an operator's symbol; the short form keeps the qualified name at depth 0 after the last
 * space there (what comes before is the return type), drops the last parameter list and what follows it, and
 * drops the parameter lists of enclosing functions (`f(int)::{lambda()#1}` -> `f::{lambda()#1}`); a trailing
 * " (...)" after a space (another tool's location) is kept as it is. */
#include "profile/cxxname.h"

#include <stdint.h>
#include <string.h>

#define CXX_LONG_TEMPLATE 24 /* template argument lists longer than this are shown as <...> */

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

/* When s[i..] is the word "operator" (not inside a longer identifier), the length of "operator" and its symbol
 * ("operator<<", "operator()", "operator new"); 0 otherwise. A conversion operator ("operator bool") runs to
 * the next parameter list. */
static size_t operator_len(const char *s, size_t n, size_t i)
{
	static const char word[] = "operator";
	size_t w = sizeof word - 1;
	if (n - i < w || memcmp(s + i, word, w) != 0 || (i > 0 && ident_char(s[i - 1])))
		return 0;
	size_t j = i + w;
	if (j < n && ident_char(s[j]))
		return 0; /* operatorX: an identifier */
	if (j + 1 < n && ((s[j] == '(' && s[j + 1] == ')') || (s[j] == '[' && s[j + 1] == ']')))
		return j + 2 - i;
	if (j < n && s[j] == ' ') { /* operator new, operator delete[], operator bool, operator std::string */
		j++;
		while (j < n && s[j] != '(')
			j++;
		return j - i;
	}
	while (j < n && strchr("+-*/%^&|~!=<>,", s[j]))
		j++;
	if (j + 1 < n && s[j] == ' ' && s[j + 1] == '<') /* "operator<< <char>": its template arguments follow */
		j++;
	return j - i;
}

/* The end of the bracket group opening at s[i] (one past its closing bracket), or n when it does not close. */
static size_t group_end(const char *s, size_t n, size_t i)
{
	int depth = 0;
	for (size_t j = i; j < n; j++) {
		size_t op = operator_len(s, n, j);
		if (op) {
			j += op - 1;
			continue;
		}
		char c = s[j];
		if (c == '<' || c == '(' || c == '[' || c == '{')
			depth++;
		else if ((c == '>' || c == ')' || c == ']' || c == '}') && --depth == 0)
			return j + 1;
	}
	return n;
}

/* The length of name without what follows its parameter list: " const", " volatile", " &", " &&", " noexcept",
 * " [clone .cold]" and the like. */
static size_t trim_qualifiers(const char *s, size_t n)
{
	static const char *const quals[] = { " const", " volatile", " &&", " &", " noexcept" };
	for (bool again = true; again;) {
		again = false;
		while (n > 0 && s[n - 1] == ' ')
			n--;
		for (size_t k = 0; k < sizeof quals / sizeof quals[0]; k++) {
			size_t q = strlen(quals[k]);
			if (n > q && memcmp(s + n - q, quals[k], q) == 0 && s[n - q - 1] == ')') {
				n -= q;
				again = true;
			}
		}
		if (n > 0 && s[n - 1] == ']') { /* " [clone .isra.0]", " [abi:cxx11]" */
			size_t j = n - 1;
			while (j > 0 && s[j] != '[')
				j--;
			if (j > 0 && s[j] == '[' && s[j - 1] == ' ') {
				n = j - 1;
				again = true;
			}
		}
	}
	return n;
}

/* Where a trailing annotation starts: " (...)" after a space at depth 0 that closes at the end, as another tool's
 * label puts a location after the name ("ns::f (src/core/io.c:12)", a path of more than two parts that the label
 * grammar does not read as one, §4.1); n when there is none. A demangled name never has it: a parameter list
 * follows its name without a space. */
/* The index after what starts at s[i] at depth 0: an operator's symbol, a whole bracket group, or one byte. */
static size_t top_step(const char *s, size_t n, size_t i)
{
	size_t op = operator_len(s, n, i);
	if (op)
		return i + op;
	char c = s[i];
	return c == '<' || c == '(' || c == '[' || c == '{' ? group_end(s, n, i) : i + 1;
}

static size_t annotation_at(const char *s, size_t n)
{
	size_t at = n;
	for (size_t i = 0, e; i < n; i = e) {
		e = top_step(s, n, i);
		if (s[i] == '(' && i > 0 && s[i - 1] == ' ' && e == n)
			at = i - 1;
	}
	while (at > 0 && at < n && s[at - 1] == ' ')
		at--;
	return at;
}

/* Where the qualified name starts and where its last parameter list starts ([*start, *end) is the name). False
 * when the name is not C++-shaped (no parameter list, no template arguments, no space at depth 0). */
static bool locate(const char *s, size_t n, size_t *start, size_t *end)
{
	n = trim_qualifiers(s, n);
	*start = 0;
	*end = n;
	size_t last_params = n;
	bool scoped = false;      /* a "::" at depth 0 */
	size_t op_end = SIZE_MAX; /* where the last operator's symbol ended */
	for (size_t i = 0; i < n;) {
		size_t op = operator_len(s, n, i);
		if (op) {
			i += op;
			op_end = i;
			continue;
		}
		char c = s[i];
		if (c == ' ' && i + 1 < n && s[i + 1] == '[') /* " [clone .cold]", " [abi:cxx11]" */
			break;
		if (c == ' ') { /* a space at depth 0: what came before is a return type */
			*start = i + 1;
			last_params = n;
			i++;
			continue;
		}
		if (c == ':' && i + 1 < n && s[i + 1] == ':')
			scoped = true;
		if (c == '(' || c == '<' || c == '[' || c == '{') {
			size_t e = group_end(s, n, i);
			if (c == '(' && i > *start && (ident_char(s[i - 1]) || s[i - 1] == '>' || s[i - 1] == ')' || i == op_end))
				last_params = i;
			i = e;
			continue;
		}
		i++;
	}
	/* C++-shaped: a scope or a parameter list closing the name ("(DOM) Event.type", "<module>" are not) */
	bool params = last_params < n && s[n - 1] == ')';
	if (!scoped && !params) {
		*start = 0;
		*end = n;
		return false;
	}
	if (params)
		*end = last_params;
	return *end > *start;
}

bool label_cxx_name_is_long(const char *name, size_t len)
{
	size_t start, end;
	len = annotation_at(name, len);
	if (!locate(name, len, &start, &end))
		return false;
	if (start > 0 || end < len)
		return true;
	for (size_t i = start; i < end; i++)
		if (name[i] == '<' || name[i] == '(')
			return true;
	return false;
}

void label_cxx_short_name(struct sbuf *out, const char *s, size_t len)
{
	size_t start, end, n = annotation_at(s, len);
	if (!locate(s, n, &start, &end)) {
		sbuf_add(out, s, len);
		return;
	}
	size_t before = out->len, op_end = SIZE_MAX;
	for (size_t i = start; i < end;) {
		size_t op = operator_len(s, end, i);
		if (op) {
			sbuf_add(out, s + i, op);
			i += op;
			op_end = i;
			continue;
		}
		char c = s[i];
		if (c == '<' || c == '(' || c == '[' || c == '{') {
			size_t e = group_end(s, end, i);
			bool params = c == '(' && i > start &&
				      (ident_char(s[i - 1]) || s[i - 1] == '>' || s[i - 1] == ')' || i == op_end);
			if (params) {
				/* an enclosing function's parameters: dropped */
			} else if (c == '<' && e - i > CXX_LONG_TEMPLATE) {
				sbuf_addstr(out, "<...>");
			} else {
				sbuf_add(out, s + i, e - i);
			}
			i = e;
			continue;
		}
		sbuf_addch(out, c);
		i++;
	}
	if (out->len == before) /* nothing left of it: the name as it was */
		sbuf_add(out, s, n);
	sbuf_add(out, s + n, len - n); /* the annotation as it was */
}

size_t label_cxx_scope_prefix(const char *s, size_t n, int depth, size_t *ncomp)
{
	size_t cuts[64], ncuts = 0; /* the offsets of each "::" at depth 0 */
	for (size_t i = 0, e; i < n; i = e) {
		e = top_step(s, n, i);
		if (e == i + 1 && s[i] == ':' && i + 1 < n && s[i + 1] == ':') {
			if (ncuts < sizeof cuts / sizeof cuts[0])
				cuts[ncuts++] = i;
			e = i + 2;
		}
	}
	*ncomp = ncuts + 1;
	if (ncuts == 0 || depth <= 0)
		return 0;
	size_t k = (size_t)depth < ncuts ? (size_t)depth : ncuts; /* never the function: at most ncuts components */
	return cuts[k - 1];
}

size_t label_unversioned_len(const char *s, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (s[i] != '@' || s[i - 1] == '@')
			continue;
		size_t v = i + 1 + (i + 1 < n && s[i + 1] == '@');
		if (v >= n || !(s[v] >= 'A' && s[v] <= 'Z'))
			continue;
		bool version = true;
		for (size_t j = v; j < n && version; j++)
			version = ident_char(s[j]) || s[j] == '.';
		if (version)
			return i;
	}
	return n;
}
