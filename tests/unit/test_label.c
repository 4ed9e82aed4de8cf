/* test_label.c — the frame-label grammar both ways (docs/design.md §4.1): label_parse(label_append(frame)) gives
 * back the frame's parts as the label shows them (function, short file path and line, module base name, the
 * offset of a nameless frame, kernel, JIT or Python kind, inlining), finished labels from other tools parse into
 * the same parts, and every label renders back from its parts byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "base/sbuf.h"
#include "profile/cxxname.h"
#include "profile/label.h"
#include "profile/profile.h"

/* Copies a span (NULL with length 0 for an absent part) into buf as a string. */
static const char *span(char *buf, size_t cap, const char *s, size_t n)
{
	snprintf(buf, cap, "%.*s", (int)n, s ? s : "");
	return buf;
}

static void check_parts(const char *label, const char *func, const char *file, unsigned line, const char *module,
			enum frame_kind kind)
{
	struct label_parts lp;
	char buf[256];
	label_parse(label, strlen(label), &lp);
	assert_string_equal(span(buf, sizeof buf, lp.func, lp.func_len), func);
	assert_string_equal(span(buf, sizeof buf, lp.file, lp.file_len), file);
	assert_string_equal(span(buf, sizeof buf, lp.module, lp.module_len), module);
	assert_int_equal(lp.line, line);
	assert_int_equal(lp.kind, kind);
	assert_true(lp.file_len == 0 || lp.file);
	assert_true(lp.module_len == 0 || lp.module);
	/* and the parts render back to the label */
	struct sbuf again = SBUF_INIT;
	label_render(&again, &lp, 0);
	if (label[0])
		assert_string_equal(again.buf, label);
	sbuf_release(&again);
}

static void test_label__parse_of_append_gives_the_parts(void **state)
{
	(void)state;
	static const struct {
		/* the frame */
		const char *func, *file;
		unsigned line;
		const char *module;
		enum frame_kind kind;
		unsigned flags;
		/* the label, and the parts read back from it */
		const char *label, *p_func, *p_file;
		unsigned p_line;
		const char *p_module;
	} cases[] = {
		{ "parse", "/src/app/parse.c", 10, "/bin/app", FRAME_USER, 0,
		  "parse (app/parse.c:10)", "parse", "app/parse.c", 10, "" },
		{ "parse", "/src/app/parse.c", 10, "/bin/app", FRAME_USER, LABEL_NO_LINES,
		  "parse (app/parse.c)", "parse", "app/parse.c", 0, "" },
		{ "helper", "util.c", 0, "", FRAME_USER, 0, "helper (util.c)", "helper", "util.c", 0, "" },
		{ "memcpy", "", 0, "/lib/x86_64-linux-gnu/libc.so.6", FRAME_USER, 0,
		  "memcpy (libc.so.6)", "memcpy", "", 0, "libc.so.6" },
		{ "", "", 0, "/usr/lib/libfoo.so.1", FRAME_USER, 0, "[unknown] (libfoo.so.1)", "", "", 0,
		  "libfoo.so.1" },
		{ "foo(int) const", "/x/a/b.cc", 3, "", FRAME_USER, 0, "foo(int) const (a/b.cc:3)", "foo(int) const",
		  "a/b.cc", 3, "" },
		{ "run", "/usr/lib/python3/pkg/mod.py", 12, "", FRAME_PYTHON, 0, "run (pkg/mod.py:12)", "run",
		  "pkg/mod.py", 12, "" },
		{ "do_syscall_64", "", 0, "", FRAME_KERNEL, 0, "do_syscall_64_[k]", "do_syscall_64", "", 0, "" },
		{ "ext4_read", "", 0, "[kernel.kallsyms]", FRAME_KERNEL, 0, "ext4_read ([kernel.kallsyms])_[k]",
		  "ext4_read", "", 0, "[kernel.kallsyms]" },
		{ "vfs_read", "/k/fs/read_write.c", 452, "", FRAME_KERNEL, 0, "vfs_read (fs/read_write.c:452)_[k]",
		  "vfs_read", "fs/read_write.c", 452, "" },
		{ "jit_fn", "", 0, "/tmp/perf-1.map", FRAME_JIT, 0, "jit_fn (perf-1.map)_[j]", "jit_fn", "", 0,
		  "perf-1.map" },
		{ "compiled", "/srv/x/y.js", 5, "", FRAME_JIT, 0, "compiled (x/y.js:5)_[j]", "compiled", "x/y.js", 5,
		  "" },
		{ "main", "", 0, "", FRAME_USER, 0, "main", "main", "", 0, "" },
		{ "", "", 0, "", FRAME_USER, 0, "[unknown]", "", "", 0, "" },
	};
	struct profile *p = profile_new();
	assert_non_null(p);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct frame f = { 0 };
		f.func = profile_intern_cstr(p, cases[i].func);
		f.file = profile_intern_cstr(p, cases[i].file);
		f.module = profile_intern_cstr(p, cases[i].module);
		f.line = cases[i].line;
		/* a ".py" frame is made a user frame here: the model itself makes it a Python frame */
		f.kind = (uint8_t)(cases[i].kind == FRAME_PYTHON ? FRAME_USER : cases[i].kind);
		uint32_t id = profile_frame(p, &f);
		assert_int_equal(profile_frame_get(p, id)->kind, cases[i].kind);
		struct sbuf label = SBUF_INIT;
		label_append(&label, p, id, cases[i].flags);
		assert_false(label.oom);
		assert_string_equal(label.buf, cases[i].label);
		check_parts(label.buf, cases[i].p_func, cases[i].p_file, cases[i].p_line, cases[i].p_module,
			    cases[i].kind);
		sbuf_release(&label);
	}
	profile_free(p);
}

/* Labels written by other tools (folded files): the same grammar, and what is not a location stays in the name. */
static void test_label__parse_finished_labels(void **state)
{
	(void)state;
	static const struct {
		const char *label, *func, *file;
		unsigned line;
		const char *module;
		enum frame_kind kind;
	} cases[] = {
		{ "parse (src/parse.c:10)", "parse", "src/parse.c", 10, "", FRAME_USER },
		{ "memcpy (libc.so.6)", "memcpy", "", 0, "libc.so.6", FRAME_USER },
		{ "foo(int) const (a/b.cc:3)", "foo(int) const", "a/b.cc", 3, "", FRAME_USER },
		{ "do_syscall_64_[k]", "do_syscall_64", "", 0, "", FRAME_KERNEL },
		{ "(root)", "(root)", "", 0, "", FRAME_USER },
		{ "f(x)", "f(x)", "", 0, "", FRAME_USER },       /* no space before "(": part of the name */
		{ "g ()", "g ()", "", 0, "", FRAME_USER },       /* an empty group is not a location */
		{ "h (a (b) c)", "h", "", 0, "a (b) c", FRAME_USER }, /* nested parentheses stay in the group */
		{ "lib (x.so.c)", "lib", "", 0, "x.so.c", FRAME_USER }, /* ".so" makes it a module */
		/* parts that would not render back: the whole label is the name */
		{ "big (a.c:99999999999)", "big (a.c:99999999999)", "", 0, "", FRAME_USER },
		{ "deep (a/b/c.c:3)", "deep (a/b/c.c:3)", "", 0, "", FRAME_USER },
		{ "mod (/lib/libc.so.6)", "mod (/lib/libc.so.6)", "", 0, "", FRAME_USER },
		{ "libfoo.so.1+0x4300", "", "", 0, "libfoo.so.1", FRAME_USER },
		{ "libfoo.so.1+0x04300", "libfoo.so.1+0x04300", "", 0, "", FRAME_USER },
		{ "[unknown] (libc.so.6)", "", "", 0, "libc.so.6", FRAME_USER },
		{ "[unknown]", "", "", 0, "", FRAME_USER },
		{ "run (pkg/mod.py:7)", "run", "pkg/mod.py", 7, "", FRAME_PYTHON },
		{ "_[k]", "_[k]", "", 0, "", FRAME_USER },
		{ "[unknown]_[k]", "", "", 0, "", FRAME_KERNEL },
		{ "t (a.c:)", "t", "", 0, "a.c:", FRAME_USER },
		{ "jit_fn (perf-1.map)_[j]", "jit_fn", "", 0, "perf-1.map", FRAME_JIT },
		{ "helper (util.c)", "helper", "util.c", 0, "", FRAME_USER },
		{ "", "", "", 0, "", FRAME_USER },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_parts(cases[i].label, cases[i].func, cases[i].file, cases[i].line, cases[i].module, cases[i].kind);
}

/* Inlining, offsets and thread roots. */
static void test_label__inlined_offset_and_thread_root(void **state)
{
	(void)state;
	struct label_parts lp;
	const char *l = "mix_step (targets/inlined.c:12)_[i]";
	label_parse(l, strlen(l), &lp);
	assert_true(lp.inlined);
	assert_int_equal(lp.kind, FRAME_USER);
	assert_int_equal(lp.line, 12);
	l = "libfoo.so.1+0x4300";
	label_parse(l, strlen(l), &lp);
	assert_int_equal(lp.addr, 0x4300);
	assert_true(lp.offset);
	assert_int_equal(lp.func_len, 0);
	struct profile *p = profile_new();
	uint32_t id = label_frame(p, l, strlen(l));
	struct sbuf out = SBUF_INIT;
	label_append(&out, p, id, 0);
	assert_string_equal(out.buf, l);
	sbuf_release(&out);
	profile_free(p);
	size_t nl;
	uint32_t tid;
	assert_true(label_thread_root("perl (4242)", 11, &nl, &tid));
	assert_int_equal(nl, 4);
	assert_int_equal(tid, 4242);
	assert_false(label_thread_root("perl (42a)", 10, &nl, &tid));
	assert_false(label_thread_root("f (a.c:3)", 9, &nl, &tid));
	assert_false(label_thread_root("(42)", 4, &nl, &tid));
	assert_false(label_thread_root("x (99999999999)", 15, &nl, &tid));
}

/* Instruction addresses (folded --addresses): "LABEL@0xINSN" reads into insn, and back only with LABEL_ADDRESS. */
static void test_label__instruction_address(void **state)
{
	(void)state;
	static const struct {
		const char *label;
		uint64_t insn;
		const char *without; /* the label rendered without LABEL_ADDRESS */
	} cases[] = {
		{ "two_loops (targets/annot.c:9)@0x12a4", 0x12a4, "two_loops (targets/annot.c:9)" },
		{ "step (targets/annot.c:16)_[i]@0x1398", 0x1398, "step (targets/annot.c:16)_[i]" },
		{ "annot-stripped+0x1230@0x12a4", 0x12a4, "annot-stripped+0x1230" },
		{ "main@0x10bf", 0x10bf, "main" },
		{ "odd@0xZZ", 0, "odd@0xZZ" },       /* not hex: a name */
		{ "odd@0x", 0, "odd@0x" },
		{ "big@0x12345678901234567", 0, "big@0x12345678901234567" }, /* 17 digits */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct label_parts lp;
		label_parse(cases[i].label, strlen(cases[i].label), &lp);
		assert_int_equal(lp.insn, cases[i].insn);
		struct sbuf a = SBUF_INIT, b = SBUF_INIT;
		label_render(&a, &lp, LABEL_ADDRESS);
		label_render(&b, &lp, 0);
		assert_string_equal(a.buf, cases[i].label);
		assert_string_equal(b.buf, cases[i].without);
		struct profile *p = profile_new();
		uint32_t id = label_frame(p, cases[i].label, strlen(cases[i].label));
		assert_int_equal(profile_frame_insn(profile_frame_get(p, id)), cases[i].insn);
		sbuf_reset(&a);
		label_append(&a, p, id, LABEL_ADDRESS);
		assert_string_equal(a.buf, cases[i].label);
		profile_free(p);
		sbuf_release(&a);
		sbuf_release(&b);
	}
}

static void test_label__short_path(void **state)
{
	(void)state;
	assert_string_equal(label_short_path("a/b/c/d.c"), "c/d.c");
	assert_string_equal(label_short_path("/file.c"), "file.c");
	assert_string_equal(label_short_path("file.c"), "file.c");
	assert_string_equal(label_short_path("/x/file.c"), "x/file.c");
}

/* C++ names read by their brackets: the short label (no return type, no parameters, no qualifiers, long template
 * arguments as <...>) and the scope `--group-by module` takes at depth 2 — namespaces and classes, never the words
 * of a return type ("void std", "bool __gnu_cxx::__ops"). */
static void test_label__cxx_short_names_and_scopes(void **state)
{
	(void)state;
	static const struct {
		const char *full, *shortened, *scope;
	} cases[] = {
		{ "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator"
		  "<int*, std::vector<int, std::allocator<int> > >, int const&)",
		  "std::vector<...>::_M_realloc_insert<int const&>", "std::vector<...>" },
		{ "bool __gnu_cxx::__ops::_Iter_less_iter::operator()<int*, int*>(int*, int*) const",
		  "__gnu_cxx::__ops::_Iter_less_iter::operator()<int*, int*>", "__gnu_cxx::__ops" },
		{ "std::basic_ostream<char, std::char_traits<char> >& std::operator<< <std::char_traits<char> >(std::basic_"
		  "ostream<char, std::char_traits<char> >&, char const*)",
		  "std::operator<< <...>", "std" },
		{ "shapes::Circle::area() const", "shapes::Circle::area", "shapes::Circle" },
		{ "(anonymous namespace)::worker(int)", "(anonymous namespace)::worker", "(anonymous namespace)" },
		{ "foo(int)::{lambda(int)#1}::operator()(int) const", "foo::{lambda(int)#1}::operator()",
		  "foo::{lambda(int)#1}" },
		{ "ns::Foo::operator bool() const", "ns::Foo::operator bool", "ns::Foo" },
		{ "ns::Foo::operator<(ns::Foo const&) const", "ns::Foo::operator<", "ns::Foo" },
		{ "operator new(unsigned long)", "operator new", "" },
		{ "std::map<int, int>::find(int const&)", "std::map<int, int>::find", "std::map<int, int>" },
		{ "void std::__introsort_loop<long*, long>(long*, long*, long) [clone .isra.0]",
		  "std::__introsort_loop<long*, long>", "std" },
		{ "main", "main", "" },
		{ "__libc_start_main", "__libc_start_main", "" },
		{ "<module>", "<module>", "" },
		{ "(DOM) Event.type", "(DOM) Event.type", "" }, /* a JavaScript label: no C++ in it */
		{ "core::ptr::drop_in_place<alloc::vec::Vec<u8>>", "core::ptr::drop_in_place<alloc::vec::Vec<u8>>",
		  "core::ptr" },
		/* another tool's label, a location after the name (a path the grammar does not read as one): the name
		 * is shortened, the location kept; it was taken for a return type and the name dropped */
		{ "util::Worker94::step_3392 (src/core/file_32.c:702)", "util::Worker94::step_3392 (src/core/file_32.c:702)",
		  "util::Worker94" },
		{ "void ns::Pool::run(int) const (lib/a/pool.cc:12)", "ns::Pool::run (lib/a/pool.cc:12)", "ns::Pool" },
		{ "handler (src/net/io.c:3)", "handler (src/net/io.c:3)", "" },
	};
	static const struct {
		const char *name;
		size_t len;
	} versions[] = { { "clock_gettime@@GLIBC_2.17", 13 }, { "memcpy@GLIBC_2.2.5", 6 }, { "memcpy@plt", 10 },
			 { "a@b", 3 }, { "@@GLIBC_2.1", 11 }, { "x@@", 3 }, { "f@@GLIBC_2.34 junk", 18 } };
	for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
		assert_int_equal(label_unversioned_len(versions[i].name, strlen(versions[i].name)), versions[i].len);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct sbuf b = SBUF_INIT;
		label_cxx_short_name(&b, cases[i].full, strlen(cases[i].full));
		assert_string_equal(b.buf, cases[i].shortened);
		size_t ncomp, cut = label_cxx_scope_prefix(b.buf, b.len, 2, &ncomp);
		char scope[256];
		snprintf(scope, sizeof scope, "%.*s", (int)cut, b.buf);
		assert_string_equal(scope, cases[i].scope);
		if (strcmp(cases[i].full, cases[i].shortened) != 0) /* a name it changes is one it calls long */
			assert_true(label_cxx_name_is_long(cases[i].full, strlen(cases[i].full)));
		sbuf_release(&b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label__parse_of_append_gives_the_parts),
		cmocka_unit_test(test_label__parse_finished_labels),
		cmocka_unit_test(test_label__cxx_short_names_and_scopes),
		cmocka_unit_test(test_label__inlined_offset_and_thread_root),
		cmocka_unit_test(test_label__instruction_address),
		cmocka_unit_test(test_label__short_path),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
