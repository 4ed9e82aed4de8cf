/* machine.h — what plumb bench reads about the machine and the program under test: CPU, cores, kernel,
 * governor, load, git state, whether a binary is an optimized build (its DWARF producer flags), and the
 * doctor's checks. Everything here only reads; nothing changes the machine. */
#ifndef PLUMB_BENCH_MACHINE_H
#define PLUMB_BENCH_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "bench/config.h"
#include "bench/evidence.h"

/* Fills ev's machine fields (cpu_model, cores, kernel, governor, load) and created. Missing facts stay NULL. */
void bench_machine_fill(struct bench_evidence *ev);

/* Fills ev->git_commit / git_dirty for the checkout holding `dir` (left NULL / -1 outside one). */
void bench_git_fill(struct bench_evidence *ev, const char *dir);

enum bench_build { BENCH_BUILD_UNKNOWN = 0, BENCH_BUILD_OPTIMIZED, BENCH_BUILD_UNOPTIMIZED };

/* Reads the DW_AT_producer of every compile unit of an ELF file with libdw and classifies the build: a unit
 * whose recorded flags have no -O, -O0 or -Og is unoptimized; units without recorded flags (assembler, clang
 * without -grecord-command-line) do not vote. Unoptimized when such units are at least as many as optimized
 * ones; UNKNOWN without DWARF. *producer (may be NULL) receives a malloc'd producer string of the winning kind;
 * `why` gets one line of explanation. */
enum bench_build bench_binary_build(const char *path, char **producer, char *why, size_t why_len);

/* How one DW_AT_producer string reads: 1 optimized (-O, -O1..-O3, -Os, -Oz, -Ofast: the last -O wins),
 * 0 unoptimized (flags recorded but no -O, or -O0, or -Og), -1 no flags recorded (assembler, plain clang). */
int bench_producer_optimized(const char *producer);

/* The program a shell command runs: its first word after VAR=value words and `exec`/`env`, resolved against
 * cwd when it holds a '/', else along PATH. Returns a malloc'd path or NULL (a shell builtin, not found). */
char *bench_command_program(const char *command, const char *cwd);

/* The programs a suite's cases run (a case's binary, else its command's program), each once, in case order. For a
 * case whose program cannot be told (a shell builtin, not found), calls unknown(ctx, case). *programs is a
 * malloc'd array of malloc'd paths (bench_programs_free); false when out of memory. */
bool bench_suite_programs(const struct bench_suite *s, char ***programs, size_t *n,
			  void (*unknown)(void *ctx, const struct bench_case *c), void *ctx);
void bench_programs_free(char **programs, size_t n);

/* Whether an ELF file's dynamic section names a DT_NEEDED library starting with `prefix` ("libplumb.so"). */
bool bench_binary_needs(const char *path, const char *prefix);

/* A path as an output shows it: redacted (docs/design.md §3.6), and the home directory itself, which the
 * redactor leaves whole (it drops the prefix "$HOME/", and the home directory has no trailing slash), becomes
 * "~". Malloc'd, or NULL when out of memory. */
char *bench_redact_path(const char *path);

/* The trust label for a binary (BENCH_TRUST_*), from bench_binary_build. */
const char *bench_build_trust(enum bench_build b);

/* The doctor: one item per check. */
enum bench_doctor_level { BENCH_DOCTOR_OK, BENCH_DOCTOR_WARN, BENCH_DOCTOR_FAIL };
struct bench_doctor_item {
	enum bench_doctor_level level;
	char name[32];
	char detail[512];
};
struct bench_doctor {
	struct bench_doctor_item items[64];
	size_t n;
};
/* Runs the read-only checks: free disk of `dir` (NULL: the current directory) against min_free_bytes, load and
 * competing busy processes (sampled over ~0.3 s), CPU governor, perf_event_paranoid and ptrace ability, and for
 * each binary whether it is an optimized build. */
void bench_doctor_run(struct bench_doctor *d, const char *dir, unsigned long long min_free_bytes,
		      const char *const *binaries, size_t nbinaries);
/* One line per item ("ok    disk        ..."; details redacted here), and a line saying no program was checked
 * when nbinaries was 0. *fails and *warns count the items of those levels. */
void bench_doctor_write(FILE *out, const struct bench_doctor *d, size_t nbinaries, size_t *fails, size_t *warns);

#endif
