# trainscope - one GNU Makefile. Verbs: all test asan ubsan fuzz bench
# install golden-update lint clean. Dependencies come from pkg-config.

CC ?= cc
BUILD ?= build
PREFIX ?= /usr/local
CFLAGS ?= -O2 -g
FUZZ_SECONDS ?= 60
DATA ?= ../shared/data

PKGS := zlib sqlite3
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -lz -lsqlite3)
# Optional ISA-L (Debian libisal-dev): the trace reader inflates gzip with
# it, zlib staying the fallback. Found with pkg-config like everything else.
ISAL_LIBS := $(shell pkg-config --libs libisal 2>/dev/null)
ifneq ($(ISAL_LIBS),)
PKG_CFLAGS += $(shell pkg-config --cflags libisal) -DTS_HAVE_ISAL
PKG_LIBS += $(ISAL_LIBS)
endif
VERSION := $(shell cat VERSION 2>/dev/null || echo 0.0.0)

WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wvla -Wformat=2
ALL_CPPFLAGS := -Iinclude -Icli -I$(BUILD)/gen -D_GNU_SOURCE \
	-DTRAINSCOPE_VERSION='"$(VERSION)"' $(PKG_CFLAGS) $(CPPFLAGS)
ALL_CFLAGS := -std=c11 $(WARN) -MMD -MP $(CFLAGS)
LIBS := $(PKG_LIBS) -lm -lpthread

LIB_SRC := $(sort $(wildcard src/*/*.c))
CLI_SRC := $(sort $(wildcard cli/*.c))
CMD_SRC := $(sort $(wildcard cli/cmd_*.c))
TEST_SRC := $(sort $(wildcard tests/unit/*.c))
BENCH_SRC := $(sort $(wildcard bench/*.c))

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

BIN := $(BUILD)/trainscope
LIB := $(BUILD)/libtrainscope.a
UNIT := $(BUILD)/unit-tests
MAN := $(BUILD)/trainscope.1

.PHONY: all test check asan ubsan fuzz fuzz-long bench install golden-update lint clean
.DELETE_ON_ERROR:

all: $(BIN) $(LIB) $(MAN)

$(BUILD)/gen/commands.inc: $(CMD_SRC) Makefile
	@mkdir -p $(dir $@)
	@for f in $(CMD_SRC); do n=$${f#cli/cmd_}; echo "CLI_COMMAND($${n%.c})"; done > $@.tmp
	@mv $@.tmp $@

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/cli/main.o: $(BUILD)/gen/commands.inc

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LIBS)

$(MAN): $(BIN)
	$(BIN) help --man > $@

$(UNIT): $(TEST_OBJ) $(LIB)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(TEST_OBJ) $(LIB) $(LIBS)

$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CPPFLAGS) $(ALL_CFLAGS) -O2 -o $@ $< $(LIB) $(LIBS) $(BENCH_LIBS_$*)

# Optional Open MPI for `trainscope trace --mpi` (cli/trace_mpi.c only).
MPI_CFLAGS := $(shell pkg-config --cflags ompi-c 2>/dev/null)
MPI_LIBS := $(shell pkg-config --libs ompi-c 2>/dev/null)
ifneq ($(MPI_LIBS),)
$(BUILD)/cli/trace_mpi.o: ALL_CPPFLAGS += $(MPI_CFLAGS) -DTS_HAVE_MPI
LIBS += $(MPI_LIBS)
endif
# The MPI configuration is recorded in a stamp rewritten only when it
# changes, so installing (or removing) Open MPI after a build rebuilds
# trace_mpi.o and relinks the binary.
MPI_STAMP := $(BUILD)/gen/mpi.flags
MPI_NOW := $(MPI_CFLAGS) $(MPI_LIBS)
$(shell mkdir -p $(BUILD)/gen && { [ -f $(MPI_STAMP) ] && [ "$$(cat $(MPI_STAMP))" = "$(MPI_NOW)" ] || echo "$(MPI_NOW)" > $(MPI_STAMP); })
$(BUILD)/cli/trace_mpi.o $(BIN): $(MPI_STAMP)

# Every flag a build was made with (compiler, CFLAGS, pkg-config results
# such as ISA-L's, libraries) is kept in a stamp rewritten only when it
# changes: every object, the library and the binaries depend on it, so a
# build with libisal-dev and one without never mix objects.
FLAGS_STAMP := $(BUILD)/gen/build.flags
FLAGS_NOW := $(CC) | $(ALL_CPPFLAGS) | $(ALL_CFLAGS) | $(LDFLAGS) | $(LIBS)
# A dry run (make -n) builds nothing, so it does not rewrite the stamp: a
# changed stamp is phony then, and the dry run lists the rebuild.
DRY_RUN := $(findstring n,$(firstword -$(MAKEFLAGS)))
ifneq ($(file <$(FLAGS_STAMP)),$(FLAGS_NOW))
ifeq ($(DRY_RUN),)
$(shell mkdir -p $(BUILD)/gen)
$(file >$(FLAGS_STAMP),$(FLAGS_NOW))
else
.PHONY: $(FLAGS_STAMP)
endif
endif
$(LIB_OBJ) $(CLI_OBJ) $(TEST_OBJ) $(BIN) $(UNIT): $(FLAGS_STAMP)
# the stamps are written when make parses; the rule is for dry runs
$(FLAGS_STAMP):
	@mkdir -p $(dir $@) && touch $@

BENCH_LIBS_bench_tokenizer := $(shell pkg-config --libs yajl 2>/dev/null || echo -lyajl)

test: all $(UNIT)
	@TS=$(BIN) UNIT=$(UNIT) DATA=$(DATA) tests/run.sh

check: test

golden-update: all
	@TS=$(BIN) DATA=$(DATA) UPDATE=1 tests/run-golden.sh

asan:
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fno-omit-frame-pointer -fsanitize=address" \
		LDFLAGS="-fsanitize=address" test

# clang's UBSan: it also stops on pointer arithmetic on NULL (a zero offset
# to an empty input's NULL buffer), which GCC's does not check and the
# fuzz targets (clang) do
ubsan:
	$(MAKE) CC=clang BUILD=build-ubsan CFLAGS="-O1 -g -fsanitize=undefined -fno-sanitize-recover=all" \
		LDFLAGS="-fsanitize=undefined" test

FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BUILD := build-fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_CFLAGS := -std=c11 $(WARN) -O1 -g -Iinclude -D_GNU_SOURCE $(PKG_CFLAGS) $(FUZZ_SAN)
FUZZ_BIN := $(FUZZ_SRC:fuzz/%.c=$(FUZZ_BUILD)/%)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_BUILD)/%.o)

# the library is instrumented once and linked into every target
$(FUZZ_BUILD)/src/%.o: src/%.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

# the fuzz build's own flags stamp (as FLAGS_STAMP), when it is built
FUZZ_STAMP := $(FUZZ_BUILD)/build.flags
FUZZ_NOW := $(FUZZ_CFLAGS) | $(LIBS)
ifneq ($(filter fuzz fuzz-long $(FUZZ_BUILD)/%,$(MAKECMDGOALS)),)
ifneq ($(file <$(FUZZ_STAMP)),$(FUZZ_NOW))
ifeq ($(DRY_RUN),)
$(shell mkdir -p $(FUZZ_BUILD))
$(file >$(FUZZ_STAMP),$(FUZZ_NOW))
else
.PHONY: $(FUZZ_STAMP)
endif
endif
endif
$(FUZZ_LIB_OBJ) $(FUZZ_BIN): $(FUZZ_STAMP)
$(FUZZ_STAMP):
	@mkdir -p $(dir $@) && touch $@

$(FUZZ_BUILD)/libtrainscope-fuzz.a: $(FUZZ_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/%: fuzz/%.c $(FUZZ_BUILD)/libtrainscope-fuzz.a
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_BUILD)/libtrainscope-fuzz.a $(LIBS)

fuzz: $(FUZZ_BIN)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) DATA=$(DATA) fuzz/run.sh $(FUZZ_BIN)

# every target for FUZZ_MINUTES minutes (default 5), one after the other
FUZZ_MINUTES ?= 5
fuzz-long: $(FUZZ_BIN)
	@FUZZ_SECONDS=$$(( $(FUZZ_MINUTES) * 60 )) DATA=$(DATA) fuzz/run.sh $(FUZZ_BIN)

bench: all $(BENCH_SRC:bench/%.c=$(BUILD)/bench/%)
	@BUILD=$(BUILD) DATA=$(DATA) bench/run.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/trainscope
	install -m 644 $(MAN) $(DESTDIR)$(PREFIX)/share/man/man1/trainscope.1

lint:
	@tests/scripts/banned-functions.sh

clean:
	rm -rf build build-asan build-ubsan build-fuzz

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(FUZZ_LIB_OBJ:.o=.d)
