/* annotate.h — where inside a function the time goes (docs/design.md §6.8): for each function whose label matches a
 * regular expression, its samples per source line (self: the sampled code is on that line, inlined code counting
 * on the line that inlined it; inclusive: the line was on the stack), the inlined callees under the lines that
 * inlined them with their own lines, and its samples per instruction address (self at the sampled instruction;
 * inclusive at a call's return address, with the callee). Nothing is read here but the profile: the faces add the
 * source text and the disassembly.
 *
 * Ownership: annot_analyze() returns a result the caller frees with annot_result_free(); every string in it is
 * owned by the result. Names are labels as outputs show them (redacted, §3.6). */
#ifndef PLUMB_ANALYZE_ANNOTATE_H
#define PLUMB_ANALYZE_ANNOTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "profile/profile.h"

struct annot_count {
	uint32_t line;
	uint64_t self, incl;
};

/* An inlined callee's own lines, under the caller's line that inlined it. */
struct annot_inlined {
	uint32_t at_line;   /* the caller's line */
	char *func;         /* the callee's name */
	char *file;         /* its source file as the profile has it ("" when unknown) */
	uint64_t self;
	struct annot_count *lines; /* sorted by line */
	size_t nlines;
	char **texts;       /* annot_add_code: each line's text (NULL entries: not read), or NULL */
};

struct annot_addr {
	uint64_t addr;      /* module vaddr: a sampled instruction, or a call's return address */
	uint64_t self;      /* samples at this instruction */
	uint64_t incl;      /* samples below the call that returns here */
	char *callee;       /* the called function's label (return addresses), or NULL */
};

/* One source line as shown: its counts (self incl. inlined code, inclusive) and its text (NULL: not read). */
struct annot_row {
	uint32_t line;
	uint64_t self, incl;
	char *text;
};

/* One instruction of the disassembly with its counts: self at it, inclusive for a call (its callee's samples). */
struct annot_insn {
	uint64_t addr;
	uint32_t size, line;
	uint64_t self, incl;
	const char *callee;  /* a call's callee label (points into addrs), or NULL */
	char *text;
	uint64_t target;     /* a direct jump's or call's target, 0 when none */
	bool call, jump, is_target; /* is_target: a jump inside the function lands here */
	bool in_file;        /* its line is of the function's own source file (not an inlined callee's) */
};

struct annot_func {
	char *label;        /* the frame label without its line (the matched row) */
	char *name;         /* function name, or "module+0xSTART" for a nameless one */
	char *file;         /* the source path the profile has (the most common among its frames), "" when none */
	char *module;       /* its module path as the profile has it, "" when none */
	bool nameless;      /* known by module offset only */
	uint64_t start;     /* nameless: the function's start in its module */
	uint64_t self, incl;
	uint64_t no_addr;   /* self samples whose frames carry no instruction address */
	struct annot_count *lines; /* by line, sorted (lines of `file`) */
	size_t nlines;
	struct annot_inlined *inl;
	size_t ninl;
	struct annot_addr *addrs;  /* sorted by address */
	size_t naddrs;
	/* annot_add_code: the source and the machine code */
	char *source;       /* the source file read, NULL when none */
	char *source_missing; /* why not, NULL when read */
	struct annot_row *rows;
	size_t nrows;
	struct annot_insn *insns;
	size_t ninsns;
	char *asm_name;     /* the symbol the disassembly found, NULL when none (stripped) */
	uint64_t asm_start; /* the disassembled range's start */
	char *asm_missing;  /* why there is no disassembly, NULL when there is one or none was asked for */
};

struct annot_result {
	uint64_t total;     /* the profile's total weight */
	const char *unit;   /* its weight unit (points into the profile) */
	struct annot_func *funcs; /* most inclusive first */
	size_t n;
};

/* Annotates every function whose label (without its line; or its bare name) matches the POSIX extended regular
 * expression `re`, or holds it as it is (so `gzip+0x4710`, whose '+' is an operator, names that function). PLUMB_EINVAL for a bad expression (the message names it); an empty result when none matches. */
enum plumb_err annot_analyze(const struct profile *p, const char *re, struct annot_result **out, struct perr *e);
void annot_result_free(struct annot_result *r);

struct annot_code_opts {
	bool disassemble;        /* --asm: the instructions of each function (symbol/disasm.h) */
	const char *source_root; /* --source-root: where sources are looked up by their path's tail, or NULL */
	unsigned context;        /* lines shown around the lines with samples */
	size_t limit;            /* only the first `limit` functions (the most inclusive); 0: all */
};

/* Adds to each function of r the source lines around its samples (the file from the path its frames carry, else
 * under source_root by the longest tail of that path that exists there) and, when asked, its instructions with
 * their counts. What cannot be read is said in source_missing / asm_missing; only out of memory fails. */
enum plumb_err annot_add_code(struct annot_result *r, const struct annot_code_opts *o, struct perr *e);

#endif
