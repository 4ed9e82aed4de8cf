# plumb — one plain Makefile (docs/design.md §10.6).
#   make            build/plumb, build/libplumb.so (the plumb.h API) and build/libplumb-preload.so (the sampler)
#   make check      the layering check (scripts/check-layers), then every test (unit, end-to-end)
#   make asan       the same under AddressSanitizer + UBSan (build-asan/)
#   make bench      performance benchmarks against peers (bench/)
#   make fuzz       run each reader's fuzz target (clang/libFuzzer)
#   make demo       set up, build, profile the bundled example and show the result
#   make install    PREFIX=/usr/local (the tool, libplumb, plumb.h, plumb.pc, man pages, completions, docs)
# WERROR=1 turns warnings into errors (CI sets it).

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
# The release number, written once in the file VERSION: plumb --version, plumb_version(), plumb.pc and the name
# of libplumb's real file take it from here.
VERSION := $(shell cat VERSION)
PKGS    := libdw libelf zlib jansson inih
OPT     ?= -O2
SAN     ?=
CFLAGS_BASE := -std=gnu11 $(OPT) -g -Wall -Wextra -Wno-unused-parameter -Wno-format-truncation -Wshadow -Wstrict-prototypes \
	-fno-omit-frame-pointer -D_GNU_SOURCE -Iinclude -Isrc -I/usr/include/libiberty \
	$(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(SAN)
ifeq ($(WERROR),1)
CFLAGS_BASE += -Werror
endif
CFLAGS  ?=
ALL_CFLAGS := $(CFLAGS_BASE) $(CFLAGS) -MMD -MP
LIBS    := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -liberty -lcapstone -lpthread -lm -ldl -lrt
LDFLAGS ?=

# Everything under src/ except main.c and the library (src/lib) forms the core archive the tool and tests use.
CORE_SRC := $(filter-out src/main.c,$(wildcard src/*/*.c))
CORE_SRC := $(filter-out src/lib/%,$(CORE_SRC))
CORE_OBJ := $(CORE_SRC:%.c=$(BUILD)/obj/%.o)
# libplumb.so is the public API (include/plumb.h) that programs link with -lplumb; libplumb-preload.so is the
# in-process sampler that `plumb record` preloads (it wraps pthread_create, so it never rides along with -lplumb).
# Both link their own sources and a PIC archive of the layers they may use (base/, os/, and metrics/ for the
# recorder, docs/design.md §10): the linker takes from it only the objects they reach, so nothing is listed by
# hand and nothing that prints, draws or samples comes along.
LIB_SRC  := src/lib/plumb.c src/lib/metrics_recorder.c
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/pic/%.o)
PRELOAD_SRC := src/lib/sampler.c src/lib/alloc.c src/lib/preload_common.c
PRELOAD_OBJ := $(PRELOAD_SRC:%.c=$(BUILD)/pic/%.o)
PIC_SRC  := $(wildcard src/base/*.c src/os/*.c src/metrics/*.c)
PIC_LIB  := $(BUILD)/libplumbpic.a
# The library's ABI number (its soname, libplumb.so.$(LIB_ABI)): raised when a plumb.h change breaks programs
# built against the old one. It is not the release number (VERSION), which the real file's name carries.
LIB_ABI    := 1
LIB_SONAME := libplumb.so.$(LIB_ABI)
LIB_REAL   := $(LIB_SONAME).$(VERSION)
# Both libraries: every symbol bound at link time (-z defs), only what the version script names exported.
SO_LDFLAGS := -shared -fPIC -Wl,-z,defs -Wl,--as-needed

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

# Test targets: each is built with frame pointers (NAME) and without (NAME-nofp).
TARGET_SRC := $(wildcard tests/targets/*.c)
TARGET_FP  := $(TARGET_SRC:tests/targets/%.c=$(BUILD)/targets/%)
TARGET_NOFP:= $(TARGET_SRC:tests/targets/%.c=$(BUILD)/targets/%-nofp)
TARGET_CFLAGS := -std=gnu11 -g -Wall -Iinclude -pthread
# C++ test targets (tests/targets/NAME.cc), built with frame pointers only.
TARGET_CXX_SRC := $(wildcard tests/targets/*.cc)
TARGET_CXX := $(TARGET_CXX_SRC:tests/targets/%.cc=$(BUILD)/targets/%)

# Test libraries for --call (tests/targets/lib/NAME.c -> libNAME.so, libNAME-nofp.so) and test programs that
# link libplumb (tests/targets/api/NAME.c).
TESTLIB_SRC := $(wildcard tests/targets/lib/*.c)
TESTLIB_SO  := $(TESTLIB_SRC:tests/targets/lib/%.c=$(BUILD)/targets/lib%.so) $(TESTLIB_SRC:tests/targets/lib/%.c=$(BUILD)/targets/lib%-nofp.so)
API_SRC     := $(wildcard tests/targets/api/*.c)
API_BIN     := $(API_SRC:tests/targets/api/%.c=$(BUILD)/targets/%)

EXAMPLE_SRC := $(wildcard examples/*.c)
EXAMPLE_BIN := $(EXAMPLE_SRC:examples/%.c=$(BUILD)/examples/%)

# The man pages and shell completions are made by plumb itself from the option tables that parse its options
# (`plumb help --man-pages DIR`, `plumb help --completion bash|zsh`, src/cmd/doc.c), so they cannot drift from
# --help. plumb.1 stands for every page: one run writes them all.
MAN_STAMP  := $(BUILD)/man/plumb.1
COMPLETION := $(BUILD)/completion/plumb.bash $(BUILD)/completion/_plumb

.PHONY: all check unit e2e asan bench fuzz demo clean install setup
all: $(BUILD)/plumb $(BUILD)/libplumb.so $(BUILD)/libplumb-preload.so $(MAN_STAMP) $(COMPLETION)

$(MAN_STAMP): $(BUILD)/plumb
	@mkdir -p $(dir $@)
	$(BUILD)/plumb help --man-pages $(dir $@)

$(BUILD)/completion/plumb.bash: $(BUILD)/plumb
	@mkdir -p $(dir $@)
	$(BUILD)/plumb help --completion bash > $@.tmp && mv $@.tmp $@

$(BUILD)/completion/_plumb: $(BUILD)/plumb
	@mkdir -p $(dir $@)
	$(BUILD)/plumb help --completion zsh > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# libplumb is preloaded into programs built without sanitizers: it is never built with them.
LIB_CFLAGS := $(filter-out $(SAN),$(ALL_CFLAGS))
$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

# The two files that state the release number get it as PLUMB_VERSION and are rebuilt when VERSION changes.
VERSION_DEF := -DPLUMB_VERSION='"$(VERSION)"'
$(BUILD)/obj/src/main.o: ALL_CFLAGS += $(VERSION_DEF)
$(BUILD)/pic/src/lib/plumb.o: LIB_CFLAGS += $(VERSION_DEF)
$(BUILD)/obj/src/main.o $(BUILD)/pic/src/lib/plumb.o: VERSION

$(BUILD)/libplumbcore.a: $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/plumb: $(BUILD)/obj/src/main.o $(BUILD)/libplumbcore.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -rdynamic $^ $(LIBS) -o $@

$(PIC_LIB): $(PIC_SRC:%.c=$(BUILD)/pic/%.o)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/$(LIB_REAL): $(LIB_OBJ) $(PIC_LIB) src/lib/libplumb.map
	$(CC) $(LIB_CFLAGS) $(SO_LDFLAGS) -Wl,-soname,$(LIB_SONAME) -Wl,--version-script=src/lib/libplumb.map \
		$(LDFLAGS) $(LIB_OBJ) $(PIC_LIB) -lpthread -lm -o $@

# The usual links: the soname (what programs load) and the development name (what -lplumb finds).
$(BUILD)/$(LIB_SONAME): $(BUILD)/$(LIB_REAL)
	ln -sfn $(LIB_REAL) $@
$(BUILD)/libplumb.so: $(BUILD)/$(LIB_SONAME)
	ln -sfn $(LIB_SONAME) $@

$(BUILD)/libplumb-preload.so: $(PRELOAD_OBJ) $(PIC_LIB) src/lib/preload.map
	$(CC) $(LIB_CFLAGS) $(SO_LDFLAGS) -Wl,--version-script=src/lib/preload.map \
		$(LDFLAGS) $(PRELOAD_OBJ) $(PIC_LIB) -lpthread -lrt -ldl -o $@

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libplumbcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< $(BUILD)/libplumbcore.a $(LIBS) -lcmocka -o $@

# libplumb's metrics recorder is tested through its PIC object (its symbols are hidden in libplumb.so)
$(BUILD)/tests/test_metrics_recorder: tests/unit/test_metrics_recorder.c $(BUILD)/pic/src/lib/metrics_recorder.o $(BUILD)/libplumbcore.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $< $(BUILD)/pic/src/lib/metrics_recorder.o $(BUILD)/libplumbcore.a $(LIBS) -lcmocka -o $@

$(BUILD)/targets/%: tests/targets/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer $< -o $@ -lm -ldl

$(BUILD)/targets/%: tests/targets/%.cc
	@mkdir -p $(dir $@)
	$(CXX) -std=gnu++17 -g -Wall -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer $< -o $@

$(BUILD)/targets/%-nofp: tests/targets/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -O2 -fomit-frame-pointer $< -o $@ -lm -ldl

$(BUILD)/targets/lib%-nofp.so: tests/targets/lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -O2 -fomit-frame-pointer -shared -fPIC $< -o $@ -lm

$(BUILD)/targets/lib%.so: tests/targets/lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -shared -fPIC $< -o $@ -lm

$(BUILD)/targets/%: tests/targets/api/%.c $(BUILD)/libplumb.so
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -O2 $< -o $@ -L$(BUILD) -lplumb -Wl,-rpath,'$$ORIGIN/..'

bench: $(TESTLIB_SO) $(API_BIN)

$(BUILD)/examples/%: examples/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -g -O2 -fno-omit-frame-pointer -Wall $< -o $@ -lm

# The test suite, as git's t/Makefile runs it: every test file is a target of its own, named by its path, so
# `make tests/e2e/test_flame.py` runs one (a unit test by its source without .c: `make tests/unit/test_base`).
# `make check` runs them side by side, as many at a time as make's -j says or, without one, as many as the
# machine has CPUs (nproc); each prints its line with the seconds it took; then the slowest files and the closing
# "N passed, N failed, N skipped" over exactly these files (tests/run-all --summary). A new tests/e2e/test_*.py is
# picked up by the wildcard. Two marks, each a line of its own in a file:
#   # plumbtest: alone   it samples CPU-bound targets and checks their shares: such files never run two at a time.
#                        `check` runs them one after another as one job (check-alone), started first, so they
#                        take one job slot from the start and the other files share the rest; tests/run-all also
#                        holds a lock for them, for files started side by side some other way
#   # plumbtest: slow    it takes long (tens of seconds): started right after, so it does not end the run alone
#   # plumbtest: light   it mostly waits (a terminal, a server, timers: a fifth of its time or less on a CPU):
#                        check-alone runs these one after another beside its own chain, so their waiting does
#                        not hold one of the job slots the CPU-bound files share
TESTS_UNIT  := $(UNIT_SRC:%.c=%)
TESTS_PY    := $(sort $(wildcard tests/tools/test_*.py tests/e2e/test_*.py))
TESTS_ALONE := $(sort $(shell grep -l '^\# plumbtest: alone$$' $(TESTS_PY) /dev/null))
TESTS_LIGHT := $(filter-out $(TESTS_ALONE),$(sort $(shell grep -l '^\# plumbtest: light$$' $(TESTS_PY) /dev/null)))
TESTS_SLOW  := $(filter-out $(TESTS_ALONE) $(TESTS_LIGHT),$(sort $(shell grep -l '^\# plumbtest: slow$$' $(TESTS_PY) /dev/null)))
TESTS       := $(TESTS_UNIT) $(TESTS_PY)
TEST_BUILD  := all $(UNIT_BIN) $(TARGET_FP) $(TARGET_NOFP) $(TARGET_CXX) $(TESTLIB_SO) $(API_BIN)
.PHONY: test-build check-layers check-files check-alone $(TESTS)
test-build: $(TEST_BUILD)
check-layers:
	@scripts/check-layers
$(TESTS_UNIT): test-build
	@BUILD=$(BUILD) tests/run-all --one $@ $(RUN_ONE)
$(TESTS_PY): test-build
	@BUILD=$(BUILD) tests/run-all --one $@ $(RUN_ONE)

# a file run by `check` keeps going (its outcome is in its tally, the closing line says it); run alone it fails.
# Without a -j of its own (MAKEFLAGS holds it, or the jobserver of a parallel make above) check runs the files
# through a make of its own with -j$(nproc).
check: check-layers
	@case " $$MAKEFLAGS " in *" -j"*|*" --jobserver"*) jobs= ;; *) jobs=-j$$(nproc) ;; esac; \
	$(MAKE) --no-print-directory $$jobs RUN_ONE=--keep-going check-files
	@BUILD=$(BUILD) tests/run-all --summary $(TESTS)
check-files: check-alone $(TESTS_SLOW) $(filter-out $(TESTS_ALONE) $(TESTS_LIGHT) $(TESTS_SLOW),$(TESTS))
check-alone: test-build
	@( for t in $(TESTS_LIGHT); do BUILD=$(BUILD) tests/run-all --one $$t $(RUN_ONE) || exit 1; done ) & light=$$!; \
	for t in $(TESTS_ALONE); do BUILD=$(BUILD) tests/run-all --one $$t $(RUN_ONE) || { wait $$light; exit 1; }; done; \
	wait $$light

unit: $(UNIT_BIN)
	@BUILD=$(BUILD) tests/run-all --unit-only

asan:
	PLUMB_TEST_SANITIZED=1 $(MAKE) BUILD=build-asan OPT=-O1 \
		SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined" check

bench: all $(TARGET_FP) $(TARGET_NOFP)
	@BUILD=$(BUILD) bench/run

fuzz:
	@BUILD=$(BUILD) tests/fuzz/run

demo: setup
	@$(MAKE) --no-print-directory all $(BUILD)/examples/wordfreq
	@BUILD=$(BUILD) scripts/demo

setup:
	@scripts/setup

# libplumb as a distribution ships it (the real file, the soname link, the -lplumb link); the sampler in a
# directory of its own, where `plumb record` looks for it and the linker does not; the man pages, the bash and
# zsh completions where those shells look for them, and the documents.
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/lib/plumb \
		$(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/zsh/site-functions \
		$(DESTDIR)$(PREFIX)/share/doc/plumb
	install -m 644 $(BUILD)/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(BUILD)/completion/plumb.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/plumb
	install -m 644 $(BUILD)/completion/_plumb $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_plumb
	install -m 644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/plumb/
	install -m 755 $(BUILD)/plumb $(DESTDIR)$(PREFIX)/bin/plumb
	install -m 755 $(BUILD)/$(LIB_REAL) $(DESTDIR)$(PREFIX)/lib/$(LIB_REAL)
	ln -sfn $(LIB_REAL) $(DESTDIR)$(PREFIX)/lib/$(LIB_SONAME)
	ln -sfn $(LIB_SONAME) $(DESTDIR)$(PREFIX)/lib/libplumb.so
	install -m 755 $(BUILD)/libplumb-preload.so $(DESTDIR)$(PREFIX)/lib/plumb/libplumb-preload.so
	install -m 644 include/plumb.h $(DESTDIR)$(PREFIX)/include/plumb.h
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' scripts/plumb.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/plumb.pc

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
