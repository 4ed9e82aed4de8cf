/* test_annotate.c — annot_analyze on a profile with known answers (docs/design.md §6.8): self on the line holding
 * the sampled code (inlined code on the line that inlined it, its callee's own lines under it), inclusive once
 * per sample however often the function recurses, a call's inclusive samples at its return address, none for a
 * user frame a kernel frame interrupted, and a nameless function's instructions kept beside its start. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "analyze/annotate.h"
#include "profile/profile.h"

static uint32_t fr(struct profile *p, const char *func, uint32_t line, uint64_t addr, bool inlined)
{
	struct frame f = { 0 };
	f.func = profile_intern_cstr(p, func);
	f.file = profile_intern_cstr(p, "/src/a.c");
	f.module = profile_intern_cstr(p, "/bin/a");
	f.line = line;
	f.addr = addr;
	f.inlined = inlined;
	return profile_frame(p, &f);
}

static void add(struct profile *p, const uint32_t *frames, size_t n, uint64_t w)
{
	uint32_t t = profile_thread(p, 1, 1, "t");
	assert_true(profile_add_sample(p, profile_stack_from(p, frames, n), t, 0, w));
}

static const struct annot_count *line(const struct annot_count *v, size_t n, uint32_t l)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].line == l)
			return &v[i];
	fail_msg("no line %u", l);
	return NULL;
}

static const struct annot_addr *addr(const struct annot_func *f, uint64_t a)
{
	for (size_t i = 0; i < f->naddrs; i++)
		if (f->addrs[i].addr == a)
			return &f->addrs[i];
	fail_msg("no address 0x%llx", (unsigned long long)a);
	return NULL;
}

static void test_annotate__lines_inlines_recursion_and_calls(void **state)
{
	(void)state;
	struct profile *p = profile_new();
	uint32_t main_ = fr(p, "main", 5, 0x100, false);
	struct frame k = { 0 };
	k.kind = FRAME_KERNEL;
	k.func = profile_intern_cstr(p, "irq");
	uint32_t kern = profile_frame(p, &k);
	add(p, (uint32_t[]){ main_, fr(p, "outer", 10, 0x210, false) }, 2, 3);
	add(p, (uint32_t[]){ main_, fr(p, "outer", 12, 0, false), fr(p, "inl", 30, 0x220, true) }, 3, 2);
	add(p, (uint32_t[]){ main_, fr(p, "outer", 11, 0x230, false), fr(p, "outer", 10, 0x210, false) }, 3, 1);
	add(p, (uint32_t[]){ main_, fr(p, "outer", 11, 0x240, false), kern }, 3, 4);
	struct annot_result *r;
	struct perr e = PERR_INIT;
	assert_int_equal(annot_analyze(p, "^(outer|main)$", &r, &e), PLUMB_OK);
	assert_int_equal(r->n, 2);
	assert_int_equal(r->total, 10);
	const struct annot_func *m = &r->funcs[0], *o = &r->funcs[1]; /* equal inclusive: by label */
	assert_string_equal(m->name, "main");
	assert_string_equal(o->name, "outer");
	assert_string_equal(o->file, "/src/a.c");
	assert_int_equal(o->self, 6);
	assert_int_equal(o->incl, 10);
	assert_int_equal(line(o->lines, o->nlines, 10)->self, 4);
	assert_int_equal(line(o->lines, o->nlines, 10)->incl, 4);
	assert_int_equal(line(o->lines, o->nlines, 11)->self, 0);
	assert_int_equal(line(o->lines, o->nlines, 11)->incl, 5);
	assert_int_equal(line(o->lines, o->nlines, 12)->self, 2);
	assert_int_equal(o->ninl, 1);
	assert_int_equal(o->inl[0].at_line, 12);
	assert_string_equal(o->inl[0].func, "inl");
	assert_int_equal(o->inl[0].self, 2);
	assert_int_equal(line(o->inl[0].lines, o->inl[0].nlines, 30)->self, 2);
	assert_int_equal(addr(o, 0x210)->self, 4);
	assert_int_equal(addr(o, 0x220)->self, 2);
	assert_int_equal(addr(o, 0x230)->incl, 1); /* the recursive call returns here */
	assert_string_equal(addr(o, 0x230)->callee, "outer (src/a.c)");
	for (size_t i = 0; i < o->naddrs; i++)
		assert_int_not_equal(o->addrs[i].addr, 0x240); /* interrupted by the kernel, not calling it */
	assert_int_equal(m->self, 0);
	assert_int_equal(m->incl, 10);
	assert_int_equal(addr(m, 0x100)->incl, 10);
	assert_int_equal(o->no_addr, 0);
	annot_result_free(r);
	/* the inlined callee annotated by itself: its own line */
	assert_int_equal(annot_analyze(p, "^inl$", &r, &e), PLUMB_OK);
	assert_int_equal(r->n, 1);
	assert_int_equal(r->funcs[0].self, 2);
	assert_int_equal(line(r->funcs[0].lines, r->funcs[0].nlines, 30)->self, 2);
	annot_result_free(r);
	assert_int_equal(annot_analyze(p, "(", &r, &e), PLUMB_EINVAL);
	assert_non_null(strstr(e.msg, "not a valid regular expression"));
	profile_free(p);
}

static void test_annotate__nameless_function_by_instruction(void **state)
{
	(void)state;
	struct profile *p = profile_new();
	struct frame f = { 0 };
	f.module = profile_intern_cstr(p, "/bin/stripped");
	f.offset = 1;
	f.addr = 0x1230;
	uint32_t ids[3];
	for (int i = 0; i < 3; i++) {
		f.insn = 0x1230 + 0x10 * (uint64_t)i;
		ids[i] = profile_frame(p, &f);
		assert_int_equal(profile_frame_insn(profile_frame_get(p, ids[i])), f.insn);
	}
	for (int i = 0; i < 3; i++)
		add(p, &ids[i], 1, (uint64_t)i + 1);
	struct annot_result *r;
	struct perr e = PERR_INIT;
	assert_int_equal(annot_analyze(p, "stripped\\+0x1230", &r, &e), PLUMB_OK);
	assert_int_equal(r->n, 1);
	const struct annot_func *s = &r->funcs[0];
	assert_true(s->nameless);
	assert_string_equal(s->name, "stripped+0x1230");
	assert_int_equal(s->start, 0x1230);
	assert_int_equal(s->self, 6);
	assert_int_equal(s->naddrs, 3);
	assert_int_equal(addr(s, 0x1250)->self, 3);
	annot_result_free(r);
	profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_annotate__lines_inlines_recursion_and_calls),
		cmocka_unit_test(test_annotate__nameless_function_by_instruction),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
