/* gecko_syms.c — samply's `.syms.json` symbol sidecar (format/gecko_syms.h). The file is small next to the
 * profile, so it is read as a jansson tree (base/json_tree.h) that the sidecar keeps: every name points into it.
 * Each library's entries are sorted by address once, with the known addresses mapped onto the sorted order. */
#include "format/gecko_syms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/json_tree.h"
#include "base/str.h"

struct sidecar {
	json_t *root;
	struct sym_lib *libs;
	size_t nlibs;
};

void sidecar_free(struct sidecar *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nlibs; i++) {
		for (size_t k = 0; k < s->libs[i].nentries; k++)
			free(s->libs[i].entries[k].frames);
		free(s->libs[i].entries);
		free(s->libs[i].known_rva);
		free(s->libs[i].known_idx);
	}
	free(s->libs);
	json_decref(s->root);
	free(s);
}

/* A name in the sidecar: an index into string_table, or (tolerated) a string. */
static const char *sc_str(json_t *strings, json_t *v)
{
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		json_t *s = json_array_get(strings, (size_t)json_integer_value(v));
		if (json_is_string(s))
			return json_string_value(s);
	}
	return NULL;
}

struct known {
	uint64_t rva;
	size_t orig_index;
};

static int known_cmp(const void *a, const void *b)
{
	const struct known *x = a, *y = b;
	return x->rva < y->rva ? -1 : x->rva > y->rva;
}

/* One symbol_table entry: its address range, symbol and inline frames. False when memory ran out. */
static bool entry_load(struct sym_entry *E, json_t *ent, json_t *strings)
{
	json_t *rva = json_object_get(ent, "rva"), *size = json_object_get(ent, "size");
	E->rva = json_is_integer(rva) ? (uint64_t)json_integer_value(rva) : 0;
	E->has_size = json_is_integer(size);
	E->size = E->has_size ? (uint64_t)json_integer_value(size) : 0;
	E->symbol = sc_str(strings, json_object_get(ent, "symbol"));
	json_t *frames = json_object_get(ent, "frames");
	if (!json_is_array(frames) || json_array_size(frames) == 0)
		return true;
	size_t nf = json_array_size(frames);
	E->frames = calloc(nf, sizeof *E->frames);
	if (!E->frames)
		return false;
	for (size_t f = 0; f < nf; f++) {
		json_t *fr = json_array_get(frames, f);
		json_t *line = json_object_get(fr, "line");
		E->frames[f].function = sc_str(strings, json_object_get(fr, "function"));
		E->frames[f].file = sc_str(strings, json_object_get(fr, "file"));
		E->frames[f].line = json_is_integer(line) && json_integer_value(line) > 0
					    ? (uint32_t)json_integer_value(line)
					    : 0;
	}
	E->nframes = nf;
	return true;
}

/* Sorts L's entries by rva; order[original index] becomes the sorted index. False when memory ran out. */
static bool entries_sort(struct sym_lib *L, size_t *order)
{
	size_t nt = L->nentries;
	struct known *tmp = calloc(nt + 1, sizeof *tmp);
	struct sym_entry *sorted = calloc(nt + 1, sizeof *sorted);
	if (!tmp || !sorted) {
		free(tmp);
		free(sorted);
		return false;
	}
	for (size_t k = 0; k < nt; k++)
		tmp[k] = (struct known){ L->entries[k].rva, k };
	qsort(tmp, nt, sizeof *tmp, known_cmp);
	for (size_t k = 0; k < nt; k++) {
		sorted[k] = L->entries[tmp[k].orig_index];
		order[tmp[k].orig_index] = k;
	}
	free(L->entries);
	L->entries = sorted;
	free(tmp);
	return true;
}

/* known_addresses: [[rva, original entry index], ...] sorted by rva onto the sorted entries; pairs that do not
 * fit are left out. False when memory ran out. */
static bool known_load(struct sym_lib *L, json_t *known, const size_t *order)
{
	size_t nk = json_is_array(known) ? json_array_size(known) : 0, nt = L->nentries;
	struct known *ks = calloc(nk + 1, sizeof *ks);
	L->known_rva = calloc(nk + 1, sizeof *L->known_rva);
	L->known_idx = calloc(nk + 1, sizeof *L->known_idx);
	if (!ks || !L->known_rva || !L->known_idx) {
		free(ks);
		return false;
	}
	size_t m = 0;
	for (size_t k = 0; k < nk; k++) {
		json_t *pair = json_array_get(known, k);
		json_t *a = json_array_get(pair, 0), *b = json_array_get(pair, 1);
		if (!json_is_integer(a) || !json_is_integer(b) || json_integer_value(b) < 0 ||
		    (size_t)json_integer_value(b) >= nt)
			continue;
		ks[m++] = (struct known){ (uint64_t)json_integer_value(a), order[json_integer_value(b)] };
	}
	qsort(ks, m, sizeof *ks, known_cmp);
	for (size_t k = 0; k < m; k++) {
		L->known_rva[k] = ks[k].rva;
		L->known_idx[k] = (uint32_t)ks[k].orig_index;
	}
	L->nknown = m;
	free(ks);
	return true;
}

/* One element of data[] (an object) into L, which the sidecar already counts (so sidecar_free frees what was
 * read when memory runs out half way). False when memory ran out. */
static bool lib_load(struct sym_lib *L, json_t *lib, json_t *strings)
{
	L->debug_name = sc_str(strings, json_object_get(lib, "debug_name"));
	L->debug_id = sc_str(strings, json_object_get(lib, "debug_id"));
	L->code_id = sc_str(strings, json_object_get(lib, "code_id"));
	json_t *table = json_object_get(lib, "symbol_table");
	size_t nt = json_is_array(table) ? json_array_size(table) : 0;
	L->entries = calloc(nt + 1, sizeof *L->entries);
	if (!L->entries)
		return false;
	L->nentries = nt;
	size_t *order = calloc(nt + 1, sizeof *order); /* original index -> sorted index */
	bool ok = order != NULL;
	for (size_t k = 0; ok && k < nt; k++)
		ok = entry_load(&L->entries[k], json_array_get(table, k), strings);
	ok = ok && entries_sort(L, order) && known_load(L, json_object_get(lib, "known_addresses"), order);
	free(order);
	return ok;
}

enum plumb_err sidecar_load(const char *path, struct sidecar **out, struct perr *e)
{
	struct jr_error je;
	json_t *root = jr_parse_file(path, "symbol file", FMT_SYMS_MAX, 0, &je, e);
	if (!root) {
		if (je.line < 1) /* not read: e names the file already */
			return je.code;
		return perr_set(e, PLUMB_EFORMAT, "symbol sidecar %s: %s (line %zu, byte %zu)", path, je.text, je.line,
				je.offset);
	}
	struct sidecar *s = calloc(1, sizeof *s);
	if (!s) {
		json_decref(root);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	s->root = root;
	json_t *strings = json_object_get(root, "string_table");
	json_t *data = json_object_get(root, "data");
	if (!json_is_array(strings) || !json_is_array(data)) {
		sidecar_free(s);
		return perr_set(e, PLUMB_EFORMAT,
				"symbol sidecar %s: expected {\"string_table\": [...], \"data\": [...]}", path);
	}
	s->libs = calloc(json_array_size(data) + 1, sizeof *s->libs);
	if (!s->libs) {
		sidecar_free(s);
		return perr_set(e, PLUMB_ENOMEM, "out of memory");
	}
	size_t li;
	json_t *lib;
	json_array_foreach(data, li, lib)
	{
		if (!json_is_object(lib))
			continue;
		if (!lib_load(&s->libs[s->nlibs++], lib, strings)) {
			sidecar_free(s);
			return perr_set(e, PLUMB_ENOMEM, "out of memory");
		}
	}
	*out = s;
	return PLUMB_OK;
}

static bool str_eq_ci(const char *a, const char *b)
{
	return a && b && a[0] && strcasecmp(a, b) == 0;
}

/* Debug ids come as breakpad ids in the profile ("F635824E318B3F0C842CC369737F2B680": 32 hex digits of the
 * UUID, then the age in hex) and as debugid strings in the sidecar ("f635824e-318b-3f0c-842c-c369737f2b68",
 * "-N" for a non-zero age). Compares them as (uuid, age). */
static bool debug_id_eq(const char *a, const char *b)
{
	char na[80], nb[80];
	const char *src[2] = { a, b };
	char *dst[2] = { na, nb };
	if (!a || !b || !a[0] || !b[0])
		return false;
	for (int k = 0; k < 2; k++) {
		size_t n = 0;
		for (const char *p = src[k]; *p && n + 1 < sizeof na; p++)
			if (*p != '-')
				dst[k][n++] = (char)((*p >= 'a' && *p <= 'z') ? *p - 32 : *p);
		dst[k][n] = '\0';
		if (n < 32)
			return strcmp(na, nb) == 0 && k == 1;
	}
	if (strncmp(na, nb, 32) != 0)
		return false;
	unsigned long age_a = strtoul(na + 32, NULL, 16), age_b = strtoul(nb + 32, NULL, 16);
	return age_a == age_b;
}

const struct sym_lib *sidecar_lib(const struct sidecar *s, const char *debug_id, const char *code_id,
				  const char *debug_name, const char *name)
{
	for (size_t i = 0; i < s->nlibs; i++)
		if (debug_id_eq(s->libs[i].debug_id, debug_id) || str_eq_ci(s->libs[i].code_id, code_id))
			return &s->libs[i];
	for (size_t i = 0; i < s->nlibs; i++)
		if (s->libs[i].debug_name && debug_name && strcmp(s->libs[i].debug_name, debug_name) == 0)
			return &s->libs[i];
	for (size_t i = 0; i < s->nlibs; i++)
		if (s->libs[i].debug_name && name && strcmp(s->libs[i].debug_name, name) == 0)
			return &s->libs[i];
	return NULL;
}

const struct sym_entry *sidecar_lookup(const struct sym_lib *L, uint64_t rva)
{
	size_t lo = 0, hi = L->nknown;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (L->known_rva[mid] < rva)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < L->nknown && L->known_rva[lo] == rva)
		return &L->entries[L->known_idx[lo]];
	/* the last entry starting at or before rva */
	lo = 0;
	hi = L->nentries;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (L->entries[mid].rva <= rva)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct sym_entry *E = &L->entries[lo - 1];
	if (E->has_size && E->size > 0 && rva >= E->rva + E->size)
		return NULL;
	if (!E->has_size && lo == L->nentries && rva != E->rva)
		return NULL; /* past the last symbol with no size: unknown */
	return E;
}

static bool readable(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	fclose(f);
	return true;
}

char *sidecar_find(const char *source)
{
	if (!source || strcmp(source, "-") == 0)
		return NULL;
	size_t n = strlen(source);
	char *base = strdup(source);
	if (!base)
		return NULL;
	if (n > 3 && str_ends_with(base, ".gz"))
		base[n -= 3] = '\0';
	char *cand = malloc(n + 16);
	if (!cand) {
		free(base);
		return NULL;
	}
	snprintf(cand, n + 16, "%s.syms.json", base);
	if (!readable(cand) && n > 5 && str_ends_with(base, ".json")) {
		base[n - 5] = '\0';
		snprintf(cand, n + 16, "%s.syms.json", base);
	}
	free(base);
	if (readable(cand))
		return cand;
	free(cand);
	return NULL;
}
