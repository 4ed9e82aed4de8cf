/* v8_read.c — reads what V8 writes: Chrome DevTools' and `node --cpu-prof`'s `.cpuprofile` (nodes with callFrame,
 * samples, timeDeltas; and the old nested "head" form with timestamps), Chrome's trace-event JSON whose
 * Profile/ProfileChunk events carry a cpuProfile split over chunks (or one CpuProfile event); the heap profile is
 * format/v8_heap_read.c's. Each CPU profile is one thread; a sample weighs the time to the next sample (the last
 * one: to the profile's end), in nanoseconds, as DevTools draws it, and counts as one sample.
 *
 * Frames are named as DevTools names them: a function without a name is "(anonymous)"; the tree's own "(root)" is
 * no frame; "(program)", "(idle)" and "(garbage collector)" are frames below the root, where V8 put them. The
 * documents are read as jansson trees (base/json_tree.h: the reader's depth and string caps); the node trees are
 * walked with explicit stacks, never recursion. */
#include "format/format.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashmap.h"
#include "base/idtab.h"
#include "base/json_tree.h"
#include "base/u32vec.h"
#include "format/v8_read.h"

#define V8_MAX_POS 9.0e18 /* nanosecond positions must fit */

struct v8_node {
	uint64_t id;
	uint64_t parent_id;
	bool has_parent;
	bool is_root;       /* the tree's "(root)": no frame */
	uint8_t state;      /* 0 unresolved, 1 on the walk, 2 resolved */
	uint32_t frame;
	uint32_t stack;
};

/* One CPU profile being assembled (a .cpuprofile, or a trace's Profile and its chunks). */
struct v8_cpu {
	struct v8_node *nodes;
	size_t nnodes, cap_nodes;
	struct hmap by_id;       /* node id -> index */
	struct hmap child_parent; /* child id -> index of the node that lists it in children */
	uint64_t *samples;
	size_t nsamples, cap_samples;
	double *deltas;          /* timeDeltas (µs), or absolute timestamps (µs) when `absolute` */
	size_t ndeltas, cap_deltas;
	bool absolute;
	double start, end;
	bool has_start, has_end;
	char *key;               /* a trace's profile id ("0x9", or "pid:tid") */
	uint32_t pid, tid;
};

bool v8_fail(struct v8_reader *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	perr_format_once(r->e, &r->failed, r->what, fmt, ap);
	va_end(ap);
	return false;
}

bool v8_nomem(struct v8_reader *r)
{
	if (!r->failed)
		perr_set(r->e, PLUMB_ENOMEM, "out of memory reading a V8 profile");
	r->failed = true;
	return false;
}

static void cpu_release(struct v8_cpu *c)
{
	free(c->nodes);
	hmap_release(&c->by_id);
	hmap_release(&c->child_parent);
	free(c->samples);
	free(c->deltas);
	free(c->key);
	memset(c, 0, sizeof *c);
}

/* A number: a JSON number or a string of one (Chrome writes some times as strings). */
static bool num_of(const json_t *v, double *out)
{
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return isfinite(*out);
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		char *end;
		*out = strtod(s, &end);
		return end != s && *end == '\0' && isfinite(*out);
	}
	return false;
}

/* A node id: a non-negative integer. */
bool v8_id_of(const json_t *v, uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

/* The frame of a callFrame (or of an old-format node, whose fields are its own): DevTools' names. */
uint32_t v8_frame_of(struct v8_reader *r, const json_t *cf, bool *is_root_name)
{
	const char *fn = json_string_value(json_object_get(cf, "functionName"));
	const char *url = json_string_value(json_object_get(cf, "url"));
	json_t *line = json_object_get(cf, "lineNumber");
	if (!fn || !fn[0])
		fn = "(anonymous)";
	*is_root_name = strcmp(fn, "(root)") == 0;
	struct frame f;
	memset(&f, 0, sizeof f);
	f.func = profile_intern_cstr(r->p, fn);
	f.file = url && url[0] ? profile_intern_cstr(r->p, url) : 0;
	/* V8's line numbers count from 0 */
	if (json_is_integer(line) && json_integer_value(line) >= 0 && json_integer_value(line) < UINT32_MAX)
		f.line = (uint32_t)json_integer_value(line) + 1;
	if (f.func == PROFILE_NOMEM || f.file == PROFILE_NOMEM)
		return PROFILE_NOMEM;
	return profile_frame(r->p, &f);
}

/* Adds one node object (new form: id, callFrame, children ids or parent id). `where` names it in messages. */
static bool cpu_add_node(struct v8_reader *r, struct v8_cpu *c, const json_t *n, const char *where, size_t i)
{
	if (!json_is_object(n))
		return v8_fail(r, "%s[%zu] is not an object", where, i);
	struct v8_node nd;
	memset(&nd, 0, sizeof nd);
	if (!v8_id_of(json_object_get(n, "id"), &nd.id))
		return v8_fail(r, "%s[%zu].id is not a node id", where, i);
	const json_t *cf = json_object_get(n, "callFrame");
	if (!json_is_object(cf))
		return v8_fail(r, "%s[%zu].callFrame is missing or not an object", where, i);
	json_t *parent = json_object_get(n, "parent");
	if (parent && !json_is_null(parent)) {
		if (!v8_id_of(parent, &nd.parent_id))
			return v8_fail(r, "%s[%zu].parent is not a node id", where, i);
		nd.has_parent = true;
	}
	bool root_name;
	if ((nd.frame = v8_frame_of(r, cf, &root_name)) == PROFILE_NOMEM)
		return v8_nomem(r);
	nd.is_root = root_name; /* only when it has no parent: decided when the tree is resolved */
	uint32_t dup;
	if (hmap_get(&c->by_id, nd.id, &dup))
		return v8_fail(r, "%s[%zu]: node id %llu appears twice", where, i, (unsigned long long)nd.id);
	if (c->nnodes >= UINT32_MAX - 1 || !ALLOC_GROW(c->nodes, c->nnodes + 1, c->cap_nodes))
		return v8_nomem(r);
	uint32_t idx = (uint32_t)c->nnodes;
	c->nodes[c->nnodes++] = nd;
	if (!hmap_put(&c->by_id, nd.id, idx))
		return v8_nomem(r);
	const json_t *kids = json_object_get(n, "children");
	if (kids && !json_is_array(kids))
		return v8_fail(r, "%s[%zu].children is not an array", where, i);
	for (size_t k = 0; k < json_array_size(kids); k++) {
		uint64_t kid;
		if (!v8_id_of(json_array_get(kids, k), &kid))
			return v8_fail(r, "%s[%zu].children[%zu] is not a node id", where, i, k);
		if (!hmap_put(&c->child_parent, kid, idx))
			return v8_nomem(r);
	}
	return true;
}

static bool cpu_add_nodes(struct v8_reader *r, struct v8_cpu *c, const json_t *nodes, const char *where)
{
	if (!json_is_array(nodes))
		return v8_fail(r, "%s is missing or not an array", where);
	for (size_t i = 0; i < json_array_size(nodes); i++)
		if (!cpu_add_node(r, c, json_array_get(nodes, i), where, i))
			return false;
	return true;
}

/* The old form: a nested tree under "head", each node with its own functionName, url, lineNumber and id. Walked
 * with an explicit stack of (node, parent index). */
static bool cpu_add_head(struct v8_reader *r, struct v8_cpu *c, const json_t *head)
{
	struct item {
		const json_t *n;
		uint32_t parent;
	} *todo = NULL;
	size_t ntodo = 0, cap = 0;
	bool ok = true;
	if (!ALLOC_GROW(todo, 1, cap))
		return v8_nomem(r);
	todo[ntodo++] = (struct item){ head, UINT32_MAX };
	while (ok && ntodo) {
		struct item it = todo[--ntodo];
		if (!json_is_object(it.n)) {
			ok = v8_fail(r, "a node under \"head\" is not an object");
			break;
		}
		struct v8_node nd;
		memset(&nd, 0, sizeof nd);
		if (!v8_id_of(json_object_get(it.n, "id"), &nd.id)) {
			ok = v8_fail(r, "a node under \"head\" has no id");
			break;
		}
		bool root_name;
		if ((nd.frame = v8_frame_of(r, it.n, &root_name)) == PROFILE_NOMEM) {
			ok = v8_nomem(r);
			break;
		}
		nd.is_root = root_name;
		if (it.parent != UINT32_MAX) {
			nd.has_parent = true;
			nd.parent_id = c->nodes[it.parent].id;
		}
		uint32_t dup;
		if (hmap_get(&c->by_id, nd.id, &dup)) {
			ok = v8_fail(r, "node id %llu appears twice", (unsigned long long)nd.id);
			break;
		}
		if (c->nnodes >= UINT32_MAX - 1 || !ALLOC_GROW(c->nodes, c->nnodes + 1, c->cap_nodes)) {
			ok = v8_nomem(r);
			break;
		}
		uint32_t idx = (uint32_t)c->nnodes;
		c->nodes[c->nnodes++] = nd;
		if (!hmap_put(&c->by_id, nd.id, idx)) {
			ok = v8_nomem(r);
			break;
		}
		const json_t *kids = json_object_get(it.n, "children");
		if (kids && !json_is_array(kids)) {
			ok = v8_fail(r, "node %llu's children is not an array", (unsigned long long)nd.id);
			break;
		}
		size_t nk = json_array_size(kids);
		if (!ALLOC_GROW(todo, ntodo + nk, cap)) {
			ok = v8_nomem(r);
			break;
		}
		for (size_t k = nk; k-- > 0;)
			todo[ntodo++] = (struct item){ json_array_get(kids, k), idx };
	}
	free(todo);
	return ok;
}

static bool cpu_add_numbers(struct v8_reader *r, struct v8_cpu *c, const json_t *arr, bool samples, const char *where)
{
	if (!json_is_array(arr))
		return v8_fail(r, "%s is not an array", where);
	size_t n = json_array_size(arr);
	if (samples ? !ALLOC_GROW(c->samples, c->nsamples + n, c->cap_samples)
		    : !ALLOC_GROW(c->deltas, c->ndeltas + n, c->cap_deltas))
		return v8_nomem(r);
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_array_get(arr, i);
		if (samples) {
			if (!v8_id_of(v, &c->samples[c->nsamples]))
				return v8_fail(r, "%s[%zu] is not a node id", where, i);
			c->nsamples++;
		} else {
			if (!json_is_number(v) || !isfinite(json_number_value(v)))
				return v8_fail(r, "%s[%zu] is not a number", where, i);
			c->deltas[c->ndeltas++] = json_number_value(v);
		}
	}
	return true;
}

/* The stack of every node: each node's parent resolved first, by walking up with an explicit path. */
static bool cpu_resolve(struct v8_reader *r, struct v8_cpu *c)
{
	struct u32vec path = U32VEC_INIT;
	bool ok = true;
	for (size_t i = 0; ok && i < c->nnodes; i++) {
		uint32_t cur = (uint32_t)i;
		path.n = 0;
		uint32_t base = PROFILE_ROOT;
		bool reached_top = false; /* the walk ended at a node without a parent */
		for (;;) {
			struct v8_node *nd = &c->nodes[cur];
			if (nd->state == 2) {
				base = nd->stack;
				break;
			}
			if (nd->state == 1) {
				ok = v8_fail(r, "the nodes' parents form a cycle (node %llu)", (unsigned long long)nd->id);
				break;
			}
			if (path.n >= FMT_MAX_FRAMES) {
				ok = v8_fail(r, "a node is more than %zu frames deep, the cap on one stack (docs/design.md "
					     "§6.6)", (size_t)FMT_MAX_FRAMES);
				break;
			}
			nd->state = 1;
			if (!u32vec_push(&path, cur)) {
				ok = v8_nomem(r);
				break;
			}
			uint32_t par;
			bool has = nd->has_parent ? hmap_get(&c->by_id, nd->parent_id, &par)
						  : hmap_get(&c->child_parent, nd->id, &par);
			if (nd->has_parent && !has)
				r->orphans++; /* a chunk Chrome wrote without its data: the node hangs from the root */
			if (!has) {
				reached_top = true;
				break;
			}
			cur = par;
		}
		if (!ok)
			break;
		for (size_t k = path.n; k-- > 0;) {
			struct v8_node *nd = &c->nodes[path.v[k]];
			if (k == path.n - 1 && reached_top && nd->is_root) {
				nd->stack = PROFILE_ROOT;
			} else {
				nd->stack = profile_stack(r->p, base, nd->frame);
				if (nd->stack == PROFILE_NOMEM) {
					ok = v8_nomem(r);
					break;
				}
			}
			nd->state = 2;
			base = nd->stack;
		}
	}
	u32vec_release(&path);
	return ok;
}

/* Adds the profile's samples on `thread`: sample i weighs [T_i, T_i+1) (the last: to the end), where T is the
 * running maximum of the sample times (a time that goes back counts as the latest one, as DevTools and
 * speedscope take it), rounded to nanoseconds at each position so the weights sum to the span. */
static bool cpu_emit(struct v8_reader *r, struct v8_cpu *c, uint32_t thread, const char *where)
{
	if (!cpu_resolve(r, c))
		return false;
	size_t n = c->nsamples;
	if (!c->absolute && c->ndeltas != n)
		return v8_fail(r, "%s has %zu samples but %zu timeDeltas", where, n, c->ndeltas);
	if (c->absolute && c->ndeltas != n && c->ndeltas != n + 1)
		return v8_fail(r, "%s has %zu samples but %zu timestamps", where, n, c->ndeltas);
	double origin = c->absolute ? (n ? c->deltas[0] : 0) : (c->has_start ? c->start : 0);
	double t = origin, top = -INFINITY;
	uint64_t prev_pos = 0;
	uint32_t prev_stack = 0;
	bool have_prev = false;
	for (size_t i = 0; i <= n; i++) {
		double at;
		if (i < n) {
			at = c->absolute ? c->deltas[i] : (t += c->deltas[i]);
		} else {
			/* the end: the old form's extra timestamp, else endTime (in seconds in the old form), never
			 * before the last sample (the maximum below) */
			if (c->absolute)
				at = c->ndeltas == n + 1 ? c->deltas[n] : c->has_end ? c->end * 1e6 : top;
			else
				at = c->has_end ? c->end : top;
		}
		if (at > top)
			top = at;
		double ns = (top - origin) * 1000.0;
		if (!(ns >= 0))
			ns = 0;
		if (ns > V8_MAX_POS)
			return v8_fail(r, "%s: the samples span more time than plumb can count", where);
		uint64_t pos = (uint64_t)llround(ns);
		uint32_t idx = 0;
		if (i < n && !hmap_get(&c->by_id, c->samples[i], &idx)) {
			/* its node was in a chunk written without data: the sample is skipped, and the stack before it
			 * runs on through its time, as speedscope reads it */
			r->lost_samples++;
			continue;
		}
		if (have_prev && !profile_add_weighted(r->p, prev_stack, thread, prev_pos, pos - prev_pos, 1)) {
			if (profile_overflowed(r->p))
				return v8_fail(r, "%s: the weights add up to more than plumb can count", where);
			return v8_nomem(r);
		}
		if (i == n)
			break;
		prev_stack = c->nodes[idx].stack;
		prev_pos = pos;
		have_prev = true;
	}
	return true;
}

/* A .cpuprofile's members into c. */
static bool cpu_from_object(struct v8_reader *r, struct v8_cpu *c, const json_t *o, const char *where)
{
	char w[96];
	const json_t *nodes = json_object_get(o, "nodes"), *head = json_object_get(o, "head");
	if (nodes) {
		snprintf(w, sizeof w, "%s.nodes", where);
		if (!cpu_add_nodes(r, c, nodes, w))
			return false;
	} else if (json_is_object(head)) {
		if (!cpu_add_head(r, c, head))
			return false;
	} else {
		return v8_fail(r, "%s has no \"nodes\" array (nor an old-style \"head\")", where);
	}
	const json_t *samples = json_object_get(o, "samples"), *deltas = json_object_get(o, "timeDeltas"),
		     *stamps = json_object_get(o, "timestamps");
	snprintf(w, sizeof w, "%s.samples", where);
	if (!samples)
		return v8_fail(r, "%s is missing", w);
	if (!cpu_add_numbers(r, c, samples, true, w))
		return false;
	if (deltas) {
		snprintf(w, sizeof w, "%s.timeDeltas", where);
		if (!cpu_add_numbers(r, c, deltas, false, w))
			return false;
	} else if (stamps) {
		c->absolute = true;
		snprintf(w, sizeof w, "%s.timestamps", where);
		if (!cpu_add_numbers(r, c, stamps, false, w))
			return false;
	} else if (c->nsamples) {
		return v8_fail(r, "%s has samples but no timeDeltas", where);
	}
	c->has_start = num_of(json_object_get(o, "startTime"), &c->start);
	c->has_end = num_of(json_object_get(o, "endTime"), &c->end);
	return true;
}

/* One warning each for the nodes whose parent the profile lacks and the samples of nodes it lacks. */
static void warn_orphans(struct v8_reader *r)
{
	if (r->failed || !r->opts || !r->opts->warn)
		return;
	char msg[200];
	if (r->orphans) {
		snprintf(msg, sizeof msg, "%zu node%s of the CPU profile name a parent that is not in it (a chunk written "
			 "without its data): their stacks start at them", r->orphans, r->orphans == 1 ? "" : "s");
		r->opts->warn(r->opts->warn_ctx, msg);
	}
	if (r->lost_samples) {
		snprintf(msg, sizeof msg, "%zu sample%s of the CPU profile name a node that is not in it (a chunk written "
			 "without its data): skipped", r->lost_samples, r->lost_samples == 1 ? "" : "s");
		r->opts->warn(r->opts->warn_ctx, msg);
	}
}

static enum plumb_err v8_finish_meta(struct v8_reader *r, const char *backend, const char *unit)
{
	struct profile_meta *m = profile_meta(r->p);
	m->backend = profile_intern_cstr(r->p, backend);
	m->weight_unit = profile_intern_cstr(r->p, unit);
	if (m->backend == PROFILE_NOMEM || m->weight_unit == PROFILE_NOMEM)
		return perr_set(r->e, PLUMB_ENOMEM, "out of memory reading a V8 profile");
	return PLUMB_OK;
}

enum plumb_err v8_read_doc(const char *buf, size_t len, const struct fmt_read_opts *opts, struct profile *p,
			   struct perr *e, const struct v8_format *f)
{
	struct v8_reader r = { .p = p, .e = e, .what = f->what, .opts = opts };
	struct jr_error err;
	json_t *root = jr_parse(buf, len, JR_TREE_BIG_AS_REAL, &err);
	if (!root) {
		if (err.code == PLUMB_ENOMEM)
			return perr_set(e, PLUMB_ENOMEM, "out of memory reading a V8 profile");
		return perr_set(e, PLUMB_EFORMAT, "%s at byte %zu: %s (line %zu, column %zu)", f->what, err.offset,
				err.text, err.line, err.column);
	}
	bool ok = f->doc(&r, root);
	json_decref(root);
	warn_orphans(&r);
	return ok ? v8_finish_meta(&r, f->backend, f->unit) : (e->code ? e->code : PLUMB_EFORMAT);
}

static bool cpuprofile_doc(struct v8_reader *r, json_t *root)
{
	struct v8_cpu c;
	memset(&c, 0, sizeof c);
	bool ok = json_is_object(root) ? true : v8_fail(r, "the top level is not an object");
	uint32_t thread = ok ? profile_thread(r->p, 0, 0, "") : 0;
	if (thread == PROFILE_NOMEM)
		ok = v8_nomem(r);
	ok = ok && cpu_from_object(r, &c, root, "the profile") && cpu_emit(r, &c, thread, "the profile");
	cpu_release(&c);
	return ok;
}

static const struct v8_format cpuprofile_format = {
	.what = "malformed Chrome CPU profile", .doc = cpuprofile_doc, .backend = "cpuprofile", .unit = "nanoseconds",
};

/* A .cpuprofile (node --cpu-prof, DevTools): one thread, each sample's time from its timeDelta. */
V8_READER(fmt_cpuprofile_read, cpuprofile_format)

/* ---- Chrome trace events ---- */

struct v8_trace {
	struct v8_cpu *cpus;
	size_t ncpus, cap_cpus;
	struct idtab by_key;   /* profile id -> index into cpus */
	struct hmap thread_names, process_names; /* pid << 32 | tid, and pid -> index of the naming event */
	const json_t **events; /* the events that matter, sorted by ts */
	size_t nevents, cap_events;
};

static bool cpu_key_eq(const void *ctx, uint32_t id, const void *key)
{
	const struct v8_trace *t = ctx;
	return strcmp(t->cpus[id].key, key) == 0;
}

static struct v8_cpu *trace_cpu(struct v8_trace *t, const char *key)
{
	uint32_t id = idtab_find(&t->by_key, hash_bytes(key, strlen(key)), cpu_key_eq, t, key);
	return id == IDTAB_NONE ? NULL : &t->cpus[id];
}

static double ev_ts(const json_t *ev)
{
	double ts;
	return num_of(json_object_get(ev, "ts"), &ts) ? ts : 0;
}

struct ev_order {
	double ts;
	size_t index;
};

/* By time, then by place in the file: a stable order. */
static int ev_cmp(const void *a, const void *b)
{
	const struct ev_order *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static uint32_t ev_u32(const json_t *ev, const char *key)
{
	const json_t *v = json_object_get(ev, key);
	return json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= UINT32_MAX
		       ? (uint32_t)json_integer_value(v) : 0;
}

/* The profile id of a Profile/ProfileChunk/CpuProfile event: its "id", else "pid:tid". */
static void ev_key(const json_t *ev, char *out, size_t n)
{
	const char *id = json_string_value(json_object_get(ev, "id"));
	if (id)
		snprintf(out, n, "id %s", id);
	else if (json_is_integer(json_object_get(ev, "id")))
		snprintf(out, n, "id %lld", (long long)json_integer_value(json_object_get(ev, "id")));
	else
		snprintf(out, n, "%u:%u", ev_u32(ev, "pid"), ev_u32(ev, "tid"));
}

static bool trace_new_cpu(struct v8_reader *r, struct v8_trace *t, const json_t *ev, const char *key,
			  struct v8_cpu **out)
{
	struct v8_cpu *c = trace_cpu(t, key);
	if (c) { /* a profile started again under the same id: the later one, as Chrome's own importer keeps */
		char *k = c->key;
		c->key = NULL;
		cpu_release(c);
		c->key = k;
	} else {
		if (t->ncpus >= UINT32_MAX - 1 || !ALLOC_GROW(t->cpus, t->ncpus + 1, t->cap_cpus))
			return v8_nomem(r);
		c = &t->cpus[t->ncpus];
		memset(c, 0, sizeof *c);
		if (!(c->key = strdup(key)) || !idtab_add(&t->by_key, hash_bytes(key, strlen(key)), (uint32_t)t->ncpus)) {
			free(c->key);
			c->key = NULL;
			return v8_nomem(r);
		}
		t->ncpus++;
	}
	c->pid = ev_u32(ev, "pid");
	c->tid = ev_u32(ev, "tid");
	*out = c;
	return true;
}

static bool trace_event(struct v8_reader *r, struct v8_trace *t, const json_t *ev, size_t i)
{
	const char *name = json_string_value(json_object_get(ev, "name"));
	const json_t *data = json_object_get(json_object_get(ev, "args"), "data");
	char key[96], where[64];
	ev_key(ev, key, sizeof key);
	snprintf(where, sizeof where, "event %zu", i);
	struct v8_cpu *c;
	if (strcmp(name, "CpuProfile") == 0) {
		const json_t *cp = json_object_get(data, "cpuProfile");
		if (!json_is_object(cp))
			return true; /* Chrome writes some without data */
		return trace_new_cpu(r, t, ev, key, &c) && cpu_from_object(r, c, cp, where);
	}
	if (strcmp(name, "Profile") == 0) {
		if (!trace_new_cpu(r, t, ev, key, &c))
			return false;
		c->has_start = num_of(json_object_get(data, "startTime"), &c->start);
		return true;
	}
	/* ProfileChunk */
	if (!(c = trace_cpu(t, key)) || !json_is_object(data))
		return true; /* a chunk of a profile that was never declared, or without data: nothing to add */
	const json_t *cp = json_object_get(data, "cpuProfile");
	char w[96];
	if (json_is_object(cp)) {
		const json_t *nodes = json_object_get(cp, "nodes"), *samples = json_object_get(cp, "samples");
		snprintf(w, sizeof w, "%s.args.data.cpuProfile.nodes", where);
		if (nodes && !cpu_add_nodes(r, c, nodes, w))
			return false;
		snprintf(w, sizeof w, "%s.args.data.cpuProfile.samples", where);
		if (samples && !cpu_add_numbers(r, c, samples, true, w))
			return false;
	}
	const json_t *deltas = json_object_get(data, "timeDeltas");
	snprintf(w, sizeof w, "%s.args.data.timeDeltas", where);
	if (deltas && !cpu_add_numbers(r, c, deltas, false, w))
		return false;
	double v;
	if (num_of(json_object_get(data, "startTime"), &v)) {
		c->start = v;
		c->has_start = true;
	}
	if (num_of(json_object_get(data, "endTime"), &v)) {
		c->end = v;
		c->has_end = true;
	}
	return true;
}

/* The thread of a profile: its pid and tid, with the names the trace's metadata events give them. */
/* The trace's thread_name and process_name events, by (pid, tid) and pid: the last of each wins. */
static bool trace_names(struct v8_reader *r, struct v8_trace *t, const json_t *events)
{
	for (size_t i = 0; i < json_array_size(events) && i < UINT32_MAX; i++) {
		const json_t *ev = json_array_get(events, i);
		const char *n = json_string_value(json_object_get(ev, "name"));
		if (!n || !json_is_string(json_object_get(json_object_get(ev, "args"), "name")))
			continue;
		uint64_t pid = ev_u32(ev, "pid");
		if (strcmp(n, "thread_name") == 0 && !hmap_put(&t->thread_names, pid << 32 | ev_u32(ev, "tid"), (uint32_t)i))
			return v8_nomem(r);
		if (strcmp(n, "process_name") == 0 && !hmap_put(&t->process_names, pid, (uint32_t)i))
			return v8_nomem(r);
	}
	return true;
}

static const char *event_arg_name(const json_t *events, const struct hmap *m, uint64_t key)
{
	uint32_t i;
	if (!hmap_get(m, key, &i))
		return NULL;
	return json_string_value(json_object_get(json_object_get(json_array_get(events, i), "args"), "name"));
}

/* The thread of a profile: its pid and tid, with the names the trace's metadata events give them. */
static uint32_t trace_thread(struct v8_reader *r, const struct v8_trace *t, const json_t *events,
			     const struct v8_cpu *c)
{
	const char *tname = event_arg_name(events, &t->thread_names, (uint64_t)c->pid << 32 | c->tid);
	const char *pname = event_arg_name(events, &t->process_names, c->pid);
	uint32_t id = profile_thread(r->p, c->pid, c->tid, tname ? tname : "");
	if (id != PROFILE_NOMEM && pname && !profile_thread_set_process(r->p, id, pname, strlen(pname)))
		id = PROFILE_NOMEM;
	return id;
}

static bool chrome_trace_doc(struct v8_reader *r, json_t *root)
{
	const json_t *events = json_is_array(root) ? root : json_object_get(root, "traceEvents");
	struct v8_trace t;
	memset(&t, 0, sizeof t);
	bool ok = json_is_array(events) ? true : v8_fail(r, "no traceEvents array");
	for (size_t i = 0; ok && i < json_array_size(events); i++) {
		const json_t *ev = json_array_get(events, i);
		const char *name = json_string_value(json_object_get(ev, "name"));
		if (!name || (strcmp(name, "Profile") != 0 && strcmp(name, "ProfileChunk") != 0 &&
			      strcmp(name, "CpuProfile") != 0))
			continue;
		if (!ALLOC_GROW(t.events, t.nevents + 1, t.cap_events))
			ok = v8_nomem(r);
		else
			t.events[t.nevents++] = ev;
	}
	/* events are not always written in time order: chunks join in time order, ties in the file's order */
	struct ev_order *order = ok && t.nevents ? calloc(t.nevents, sizeof *order) : NULL;
	if (ok && t.nevents && !order)
		ok = v8_nomem(r);
	for (size_t i = 0; ok && i < t.nevents; i++)
		order[i] = (struct ev_order){ ev_ts(t.events[i]), i };
	if (order)
		qsort(order, t.nevents, sizeof *order, ev_cmp);
	for (size_t i = 0; ok && i < t.nevents; i++)
		ok = trace_event(r, &t, t.events[order[i].index], order[i].index);
	size_t used = 0;
	if (ok)
		ok = trace_names(r, &t, events);
	for (size_t i = 0; ok && i < t.ncpus; i++) {
		struct v8_cpu *c = &t.cpus[i];
		uint32_t thread = trace_thread(r, &t, events, c);
		if (thread == PROFILE_NOMEM) {
			ok = v8_nomem(r);
			break;
		}
		char where[128];
		snprintf(where, sizeof where, "the profile of thread %u", c->tid);
		ok = cpu_emit(r, c, thread, where);
		used++;
	}
	if (ok && !used)
		ok = v8_fail(r, "no CPU profile in the trace (no Profile, ProfileChunk or CpuProfile event): record "
			     "with the JavaScript samples option");
	for (size_t i = 0; i < t.ncpus; i++)
		cpu_release(&t.cpus[i]);
	free(t.cpus);
	idtab_release(&t.by_key);
	hmap_release(&t.thread_names);
	hmap_release(&t.process_names);
	free(t.events);
	free(order);
	return ok;
}

static const struct v8_format chrome_trace_format = {
	.what = "malformed Chrome trace", .doc = chrome_trace_doc, .backend = "chrome-trace", .unit = "nanoseconds",
};

/* A Chrome trace's Profile and ProfileChunk events: a thread per profile, named by the trace's metadata. */
V8_READER(fmt_chrome_trace_read, chrome_trace_format)
