/* v8_heap_read.c — reads V8's sampling heap profile (`.heapprofile`, what Chrome DevTools and Node's inspector
 * write): a tree under "head" of nodes with a callFrame, their selfSize in bytes and their children, and optionally
 * the samples that fell in each node. Each node's bytes weigh its stack (the tree's "(root)" is no frame); the
 * tree is walked with an explicit stack, never recursion. */
#include "format/format.h"

#include <stdlib.h>
#include <string.h>

#include "base/grow.h"
#include "base/hashmap.h"
#include "format/v8_read.h"

/* Each node's selfSize in bytes on its stack; with a samples array, each node's count of samples beside. */
static bool heapprofile_doc(struct v8_reader *r, json_t *root)
{
	const json_t *head = json_object_get(root, "head");
	bool ok = json_is_object(head) ? true : v8_fail(r, "\"head\" is missing or not an object");
	uint32_t thread = ok ? profile_thread(r->p, 0, 0, "") : 0;
	if (thread == PROFILE_NOMEM)
		ok = v8_nomem(r);
	profile_keep_timeline(r->p, false);
	/* samples per node id, when the profile lists them */
	struct hmap nsamples = HMAP_INIT;
	const json_t *samples = json_object_get(root, "samples");
	bool has_samples = json_is_array(samples);
	for (size_t i = 0; ok && i < json_array_size(samples); i++) {
		uint64_t id;
		uint32_t n = 0;
		if (!v8_id_of(json_object_get(json_array_get(samples, i), "nodeId"), &id)) {
			ok = v8_fail(r, "samples[%zu].nodeId is not a node id", i);
			break;
		}
		hmap_get(&nsamples, id, &n);
		if (n < UINT32_MAX && !hmap_put(&nsamples, id, n + 1))
			ok = v8_nomem(r);
	}
	struct item {
		const json_t *n;
		uint32_t stack;
		uint32_t depth;
	} *todo = NULL;
	size_t ntodo = 0, cap = 0;
	if (ok && !ALLOC_GROW(todo, 1, cap))
		ok = v8_nomem(r);
	else if (ok)
		todo[ntodo++] = (struct item){ head, PROFILE_ROOT, 0 };
	while (ok && ntodo) {
		struct item it = todo[--ntodo];
		const json_t *cf = json_object_get(it.n, "callFrame");
		if (!json_is_object(it.n) || !json_is_object(cf)) {
			ok = v8_fail(r, "a node has no callFrame object");
			break;
		}
		if (it.depth >= FMT_MAX_FRAMES) {
			ok = v8_fail(r, "a node is more than %zu frames deep, the cap on one stack (docs/design.md §6.6)",
				     (size_t)FMT_MAX_FRAMES);
			break;
		}
		bool root_name;
		uint32_t frame = v8_frame_of(r, cf, &root_name), st = it.stack;
		if (frame == PROFILE_NOMEM) {
			ok = v8_nomem(r);
			break;
		}
		if (!(it.depth == 0 && root_name) && (st = profile_stack(r->p, it.stack, frame)) == PROFILE_NOMEM) {
			ok = v8_nomem(r);
			break;
		}
		const json_t *size = json_object_get(it.n, "selfSize");
		if (!json_is_number(size) || !(json_number_value(size) >= 0) || json_number_value(size) > 9e18) {
			ok = v8_fail(r, "a node's selfSize is not a size in bytes");
			break;
		}
		uint64_t bytes = (uint64_t)json_number_value(size);
		uint32_t n = 0;
		uint64_t id;
		if (has_samples && v8_id_of(json_object_get(it.n, "id"), &id))
			hmap_get(&nsamples, id, &n);
		if ((bytes || n) && !profile_add_weighted(r->p, st, thread, 0, bytes, n)) {
			ok = profile_overflowed(r->p) ? v8_fail(r, "the sizes add up to more than plumb can count")
						   : v8_nomem(r);
			break;
		}
		const json_t *kids = json_object_get(it.n, "children");
		if (kids && !json_is_array(kids)) {
			ok = v8_fail(r, "a node's children is not an array");
			break;
		}
		size_t nk = json_array_size(kids);
		if (!ALLOC_GROW(todo, ntodo + nk, cap)) {
			ok = v8_nomem(r);
			break;
		}
		for (size_t k = nk; k-- > 0;)
			todo[ntodo++] = (struct item){ json_array_get(kids, k), st, it.depth + 1 };
	}
	free(todo);
	hmap_release(&nsamples);
	return ok;
}

static const struct v8_format heapprofile_format = {
	.what = "malformed V8 heap profile", .doc = heapprofile_doc, .backend = "heapprofile", .unit = "bytes",
};

V8_READER(fmt_heapprofile_read, heapprofile_format)
