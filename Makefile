# spanfold - one non-recursive Makefile for the library, every tool and the tests.
#
#   make                 library + every tool into bin/ (optional ones skipped with a reason)
#   make check           install missing Debian packages, build, run every test
#   make SAN=1 check     the same under AddressSanitizer + UBSan (build/san/)
#   make check-valgrind  unit tests of a normal build under valgrind
#   make check-TOOL      one tool's tests (e.g. make check-perf-fold)
#   make demo            the main job on samples/ into out/
#   make install         PREFIX=/usr/local DESTDIR=: binaries, man pages, bash completion,
#                        the Wireshark plugin into Wireshark's plugin folder for its version
#   make fuzz            libFuzzer targets (clang), each run for FUZZ_SECONDS
#   make bench           benchmarks against the peer tools (scripts/bench-*.sh)
#   make format / format-check / lint
#
# A tool lives in its own folder with a build.mk that adds itself to TOOLS and
# names its libraries (LDLIBS_<tool>); every <tool>/*.c is compiled and linked.

CC      ?= cc
CFLAGS  ?= -O2 -g
PKG_CONFIG ?= pkg-config
WARN    := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Wall -Wextra -Wshadow \
           -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla -Wno-format-nonliteral
ifeq ($(SAN),1)
B       := build/san
CFLAGS  += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all \
           -DSF_ARENA_MALLOC
LDFLAGS += -fsanitize=address,undefined
else ifeq ($(VG),1)
# valgrind's own build: gcc, so that valgrind 3.19 never meets clang-made debug info
B       := build/vg
CC      := gcc
CFLAGS  += -DSF_ARENA_MALLOC
else
B       := build
endif
BIN     := $(if $(filter 1,$(SAN) $(VG)),$(B)/bin,bin)
CPPFLAGS += -Ilib -I$(B)/gen -Itests -MMD -MP

pc = $(shell $(PKG_CONFIG) --libs $(1) 2>/dev/null)
pcflags = $(shell $(PKG_CONFIG) --cflags $(1) 2>/dev/null)
# What libspanfold.a itself needs; tools add their own in build.mk.  libcrypto is not
# linked: sf_sha256.c loads it on first use (-ldl).
LIB_LIBS = $(call pc,sqlite3 zlib liblzma libzstd libbrotlidec) -lm -ldl

# Defined before the build.mk files, which use them in prerequisite lists.
LIB_SRC := $(wildcard lib/*.c)
LIB_OBJ := $(patsubst %.c,$(B)/%.o,$(LIB_SRC)) $(B)/gen/schema_sql.o
LIBA    := $(B)/libspanfold.a

# A text file as the lines of a C string literal, each line one "...\n" (the embedded
# files: lib/schema.sql below, flamegraph/flamegraph.js in flamegraph/build.mk).
c_string_lines = sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $(1)

# The build.mk files define rules of their own (the plugin's, spantrace's); without this
# the first of them would become the default goal of a plain `make`.
.DEFAULT_GOAL := all

TOOLS :=
OPTIONAL :=
include $(sort $(wildcard */build.mk))


all: $(TOOLS:%=$(BIN)/%) $(OPTIONAL)

# ---- library -------------------------------------------------------------------
$(B)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CPPFLAGS_$(firstword $(subst /, ,$<))) $(WARN) $(CFLAGS) -c $< -o $@

# The schema is embedded as a C string so every binary can create/migrate a database.
$(B)/gen/schema_sql.c: lib/schema.sql
	@mkdir -p $(@D)
	@{ echo '/* generated from lib/schema.sql - do not edit */'; \
	   echo 'const char sf_db_schema_sql[] ='; \
	   $(call c_string_lines,$<); \
	   echo ';'; } > $@
$(B)/gen/schema_sql.o: $(B)/gen/schema_sql.c
	$(CC) $(CFLAGS) -c $< -o $@

# The version string is rebuilt only when `git describe` changes.
VERSION := 0.1.0$(shell v=$$(git describe --always --dirty 2>/dev/null) && echo "-$$v")
$(B)/gen/sf_version.h: FORCE
	@mkdir -p $(@D)
	@echo '#define SF_VERSION "$(VERSION)"' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(B)/lib/sf_opt.o: $(B)/gen/sf_version.h
$(B)/lib/sf_opt.o: CPPFLAGS += -include sf_version.h

$(LIBA): $(LIB_OBJ)
	$(AR) rcs $@ $^

# ---- tools: every <tool>/*.c, linked with the library ------------------------------
# A tool's main.c defines TOOL_main (perf_fold_main for perf-fold), not main(): the
# program's main() is generated, so that the spanfold front end can link every tool and
# call it in-process (spanfold/build.mk names the tools it links, SPANFOLD_LINKS).
$(B)/gen/entry_%.c:
	@mkdir -p $(@D)
	@printf '/* generated: the entry point of %s; getopt names the tool, not the path */\nint %s_main(int argc, char **argv);\nint main(int argc, char **argv)\n{\n    argv[0] = (char *)"%s";\n    return %s_main(argc, argv);\n}\n' \
	    $* $(subst -,_,$*) $* $(subst -,_,$*) > $@
define tool_rule
$(1)_SRC := $$(filter-out %.bpf.c,$$(wildcard $(1)/*.c))
$(1)_OBJ := $$(patsubst %.c,$(B)/%.o,$$($(1)_SRC))
$(BIN)/$(1): $$($(1)_OBJ) $(if $(filter spanfold,$(1)),,$(B)/gen/entry_$(1).o) $(LIBA)
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) $$(filter-out $(LIBA),$$^) $(LIBA) $$(LDLIBS_$(1)) $(LIB_LIBS) $$(LDLIBS) -o $$@
endef
$(foreach t,$(TOOLS),$(eval $(call tool_rule,$(t))))
$(BIN)/spanfold: $(foreach t,$(SPANFOLD_LINKS),$($(t)_OBJ) $(EXTRA_OBJ_$(t)))

# ---- tests -----------------------------------------------------------------------
# tests/unit/test_*.c link the library; tests/<tool>/test_*.c also link that tool's
# objects except main.o; tests/<tool>/t_*.sh are TAP scripts run with bin/ on PATH.
UNIT_SRC   := $(wildcard tests/unit/test_*.c)
LIB_SCRIPTS := $(sort $(wildcard tests/scripts/t_*.sh))
UNIT_BIN   := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRC))
$(B)/tests/unit/%: $(B)/tests/unit/%.o $(LIBA)
	$(CC) $(LDFLAGS) $^ $(LIB_LIBS) -o $@

define tool_test_rule
$(1)_TEST_SRC := $$(wildcard tests/$(1)/test_*.c)
$(1)_TEST_BIN := $$(patsubst tests/$(1)/%.c,$(B)/tests/$(1)/%,$$($(1)_TEST_SRC))
$(1)_SCRIPTS  := $$(sort $$(wildcard tests/$(1)/t_*.sh))
$(B)/tests/$(1)/%: $(B)/tests/$(1)/%.o $$(filter-out %/main.o,$$($(1)_OBJ)) $(LIBA)
	$$(CC) $$(LDFLAGS) $$^ $$(LDLIBS_$(1)) $(LIB_LIBS) -o $$@
check-$(1): all $$($(1)_TEST_BIN)
	@SF_BIN=$(CURDIR)/$(BIN) SF_BUILD=$(CURDIR)/$(B) SF_TOP=$(CURDIR) PATH=$(CURDIR)/$(BIN):$$$$PATH tests/run-tests.sh \
	    $$($(1)_TEST_BIN) $$($(1)_SCRIPTS) "tests/run-golden.sh $(1)"
endef
$(foreach t,$(TOOLS) $(OPTIONAL_TESTS),$(eval $(call tool_test_rule,$(t))))
# spanfold's own tests link every tool spanfold links, as bin/spanfold does (the tools'
# main.o define TOOL_main, not main); only spanfold's own main.o is left out
$(spanfold_TEST_BIN): $(B)/tests/spanfold/%: $(B)/tests/spanfold/%.o \
    $(filter-out %/main.o,$(spanfold_OBJ)) \
    $(foreach t,$(SPANFOLD_LINKS),$($(t)_OBJ) $(EXTRA_OBJ_$(t))) $(LIBA)
	$(CC) $(LDFLAGS) $(filter-out $(LIBA),$^) $(LIBA) $(LDLIBS_spanfold) $(LIB_LIBS) -o $@

# Every fuzz target is also built under $(CC) with tests/fuzz/replay.c, and its
# seeds and saved crashes (tests/fuzz/corpus/<target>/) are replayed by `make check`.
FUZZ_SRC := $(wildcard tests/fuzz/*/fuzz_*.c)
REPLAY_BIN := $(patsubst tests/fuzz/%.c,$(B)/tests/fuzz/%,$(FUZZ_SRC))
define replay_rule
$(B)/tests/fuzz/$(1)/%: $(B)/tests/fuzz/$(1)/%.o $(B)/tests/fuzz/replay.o $$(filter-out %/main.o,$$($(1)_OBJ)) $(LIBA)
	$$(CC) $$(LDFLAGS) $$^ $$(LDLIBS_$(1)) $(LIB_LIBS) -o $$@
endef
$(foreach d,$(sort $(patsubst tests/fuzz/%/,%,$(dir $(FUZZ_SRC)))),$(eval $(call replay_rule,$(d))))
REPLAY_RUNS := $(foreach f,$(REPLAY_BIN),"$(f) $(notdir $(f)) tests/fuzz/corpus/$(notdir $(f))")

ALL_TEST_BIN := $(UNIT_BIN) $(REPLAY_BIN) $(foreach t,$(TOOLS) $(OPTIONAL_TESTS),$($(t)_TEST_BIN))
# every TAP script under tests/: tools' own, cross-tool (tests/demo) and optional ones,
# which skip with their reason when what they need is missing
ALL_SCRIPTS  := $(sort $(wildcard tests/*/t_*.sh))

# `make check` first installs what is missing (scripts/deps.sh), then re-reads this
# Makefile so that pkg-config sees the new packages.
check test:
	@scripts/deps.sh check
	@$(MAKE) --no-print-directory -j2 run-tests
run-tests: all $(ALL_TEST_BIN)
	@SF_BIN=$(CURDIR)/$(BIN) SF_BUILD=$(CURDIR)/$(B) SF_TOP=$(CURDIR) PATH=$(CURDIR)/$(BIN):$$PATH tests/run-tests.sh \
	    $(filter-out $(REPLAY_BIN),$(ALL_TEST_BIN)) $(REPLAY_RUNS) $(ALL_SCRIPTS) tests/run-golden.sh

check-lib: $(UNIT_BIN)
	@SF_BUILD=$(CURDIR)/$(B) SF_TOP=$(CURDIR) tests/run-tests.sh $(UNIT_BIN) $(LIB_SCRIPTS)

check-valgrind:
	@$(MAKE) --no-print-directory -j2 VG=1 run-valgrind
run-valgrind: all $(ALL_TEST_BIN)
	@SF_BUILD=$(CURDIR)/$(B) SF_TOP=$(CURDIR) tests/run-tests.sh $(foreach t,$(filter-out $(REPLAY_BIN),$(ALL_TEST_BIN)),"valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite $(t)")

demo:
	@scripts/deps.sh build
	@$(MAKE) --no-print-directory -j2 all
	@scripts/demo.sh

bench: all
	@scripts/bench.sh

# ---- man pages, completion, install ----------------------------------------------------
# Man pages and completion are made from each tool's --help text (scripts/man.sh,
# scripts/completion.sh), so they always say what the binaries say.
PREFIX  ?= /usr/local
DESTDIR ?=
MANTOOLS := $(TOOLS) $(if $(filter $(BIN)/spantrace,$(OPTIONAL)),spantrace)
MANS    := $(MANTOOLS:%=$(B)/man/%.1)
# spanfold's sections come from its own command table, asked when the page is made
SUBCMDS_spanfold = $$($< --list-commands)
SUBCMDS_perf-fold := diff
$(B)/man/%.1: $(BIN)/% scripts/man.sh
	@mkdir -p $(@D)
	scripts/man.sh $< $* $(SUBCMDS_$*) > $@
$(B)/completion/spanfold: $(MANTOOLS:%=$(BIN)/%) scripts/completion.sh
	@mkdir -p $(@D)
	scripts/completion.sh $(BIN) > $@
man: $(MANS)
completion: $(B)/completion/spanfold
# The plugin: Wireshark loads plugins from its own folder (pkg-config's plugindir, under
# /usr) and a user's (~/.local/lib/wireshark/plugins/X.Y/epan: make install-plugin).  With
# PREFIX=/usr it goes to Wireshark's own; under another PREFIX to the same path below it
# (PREFIX/lib/wireshark/plugins/X.Y/epan), which Wireshark does not read (tshark -G
# folders lists the two it does), and install says so and what to do.
WS_PLUGINDIR := $(shell $(PKG_CONFIG) --variable=plugindir wireshark 2>/dev/null)
WS_PLUGIN_INSTALL_DIR ?= $(if $(filter /usr,$(PREFIX)),$(WS_PLUGINDIR),$(PREFIX)/lib/wireshark/plugins/$(notdir $(WS_PLUGINDIR)))/epan
install: all man completion
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/doc/spanfold
	install -m 0755 $(MANTOOLS:%=$(BIN)/%) $(DESTDIR)$(PREFIX)/bin/
	install -m 0644 $(MANS) $(DESTDIR)$(PREFIX)/share/man/man1/
	for t in $(MANTOOLS); do install -m 0644 $(B)/completion/spanfold \
	    $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$t; done
	install -m 0644 README.md LICENSE docs/*.md docs/*.png $(DESTDIR)$(PREFIX)/share/doc/spanfold/
	$(if $(DISSECTOR_SO),install -D -m 0644 $(DISSECTOR_SO) $(DESTDIR)$(WS_PLUGIN_INSTALL_DIR)/spanfold.so,@echo "install: Wireshark plugin skipped (not built)")
	@if [ -n "$(DISSECTOR_SO)" ] && [ "$(PREFIX)" != /usr ]; then echo "install: the Wireshark plugin is in $(WS_PLUGIN_INSTALL_DIR), under PREFIX; Wireshark loads plugins only from $(WS_PLUGINDIR) (make install PREFIX=/usr) and from your own folder (make install-plugin: $(WS_PLUGIN_DIR))"; fi

# ---- fuzzing: tests/fuzz/<tool|lib>/fuzz_*.c with libFuzzer ----------------------------
FUZZ_SECONDS ?= 20
FUZZ_CC      ?= clang
FUZZ_FLAGS   := -g -O1 -fsanitize=fuzzer-no-link,address,undefined -DSF_ARENA_MALLOC
FUZZ_BIN     := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRC))
build/fuzz/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(CPPFLAGS_$(firstword $(subst /, ,$<))) -Ibuild/gen $(WARN) $(FUZZ_FLAGS) -c $< -o $@
build/fuzz/obj/gen/schema_sql.o: build/gen/schema_sql.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -c $< -o $@
build/gen/schema_sql.c: lib/schema.sql
FUZZ_LIB_OBJ := $(patsubst %.c,build/fuzz/obj/%.o,$(LIB_SRC)) build/fuzz/obj/gen/schema_sql.o
# one rule per target folder, so the tool objects are real prerequisites
define fuzz_rule
build/fuzz/$(1)/%: tests/fuzz/$(1)/%.c $(FUZZ_LIB_OBJ) build/gen/sf_version.h \
    $$(if $$(filter lib,$(1)),,$$(patsubst %.c,build/fuzz/obj/%.o,$$(filter-out %/main.c %.bpf.c,$$(wildcard $(1)/*.c))))
	@mkdir -p $$(@D)
	$(FUZZ_CC) $(CPPFLAGS) -Ibuild/gen $(FUZZ_FLAGS) -fsanitize=fuzzer $$< $$(filter %.o,$$^) \
	    $$(LDLIBS_$(1)) $(LIB_LIBS) -o $$@
endef
$(foreach d,$(sort $(patsubst tests/fuzz/%/,%,$(dir $(FUZZ_SRC)))),$(eval $(call fuzz_rule,$(d))))
fuzz: $(FUZZ_BIN)
	@scripts/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_BIN)

# ---- style -------------------------------------------------------------------------
SRC_ALL = $(shell git ls-files '*.c' '*.h')
format:
	clang-format -i $(SRC_ALL)
format-check:
	clang-format --dry-run -Werror $(SRC_ALL)
lint:
	@scripts/lint.sh

clean:
	rm -rf build bin


.PHONY: man completion install
.PHONY: all check test run-tests check-lib check-valgrind run-valgrind demo bench fuzz format format-check \
        lint clean FORCE $(TOOLS:%=check-%)
.DELETE_ON_ERROR:
.SECONDARY:
-include $(shell find $(B) -name '*.d' 2>/dev/null)
