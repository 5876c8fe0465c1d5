# geak: see README.md.  `make` builds, `make check` tests, `make deps` sets up.

.SUFFIXES:

VERSION    = 0.1.0
PREFIX     = /usr/local
BINDIR     = $(PREFIX)/bin
SHAREDIR   = $(PREFIX)/share/geak
MANDIR     = $(PREFIX)/share/man
DESTDIR    =

CC        ?= cc
PKG_CONFIG = pkg-config
CFLAGS     = -O2 -g
CPPFLAGS   =
LDFLAGS    =
SANITIZE   =

# Flags every build gets, whatever the user's CFLAGS say.
GEAK_CFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -Ilib \
	-DGEAK_VERSION='"$(VERSION)"' -DGEAK_SHAREDIR='"$(SHAREDIR)"'
SAN_ON      = -fsanitize=address -fsanitize=undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SAN_FLAGS   = $(if $(SANITIZE),$(SAN_ON))

JANSSON_CFLAGS := $(shell $(PKG_CONFIG) --cflags jansson 2>/dev/null)
JANSSON_LIBS   := $(shell $(PKG_CONFIG) --libs jansson 2>/dev/null)
CURL_CFLAGS    := $(shell $(PKG_CONFIG) --cflags libcurl 2>/dev/null)
CURL_LIBS      := $(shell $(PKG_CONFIG) --libs libcurl 2>/dev/null)
ARCHIVE_CFLAGS := $(shell $(PKG_CONFIG) --cflags libarchive 2>/dev/null)
ARCHIVE_LIBS   := $(shell $(PKG_CONFIG) --libs libarchive 2>/dev/null)
CMOCKA_LIBS    := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null)

ALL_CFLAGS = $(GEAK_CFLAGS) $(JANSSON_CFLAGS) $(CURL_CFLAGS) $(ARCHIVE_CFLAGS) \
	$(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS)
ALL_LDFLAGS = $(LDFLAGS) $(SAN_FLAGS)

# One line per tool: the libraries it links beyond jansson.  A tool that
# needs no HTTP or archive code does not link them, so it runs on machines
# that lack those shared libraries.
LIBS_geak-retrieve = $(ARCHIVE_LIBS)
LIBS_geak-gen      = $(CURL_LIBS)
LIBS_geak-reflect  = $(CURL_LIBS)
LIBS_geak-opt      = $(CURL_LIBS)
LIBS_geak-import   = $(ARCHIVE_LIBS)

TOOLS = $(patsubst bin/%.c,bin/%,$(wildcard bin/*.c))
LIBSRC = $(wildcard lib/*.c lib/*/*.c)
LIBOBJ = $(LIBSRC:.c=.o)
LIBHDR = $(wildcard lib/*.h lib/*/*.h)
MAN1 = $(wildcard share/man/*.1)
MAN5 = $(wildcard share/man/*.5)
MAN7 = $(wildcard share/man/*.7)
UNIT = $(patsubst %.c,%,$(wildcard tests/unit/*.c))
HELPERS = $(patsubst %.c,%,$(wildcard tests/helpers/*.c))
BUILD_STAMP = .build-flags

# The protocol's names, generated from its table (share/harness/protocol.tsv)
# for the C side, the Python side and geak-harness(7); the generated files
# are kept in the tree, so that a build needs no Python.
PROTO = lib/eval/harness.h share/harness/geakh/proto.py share/man/geak-harness.7
PROTO_SRC = share/harness/protocol.tsv share/harness/protogen.awk

all: $(PROTO) $(TOOLS)

lib/eval/harness.h: $(PROTO_SRC)
	awk -v out=c -f share/harness/protogen.awk share/harness/protocol.tsv > $@.tmp && mv $@.tmp $@
share/harness/geakh/proto.py: $(PROTO_SRC)
	awk -v out=py -f share/harness/protogen.awk share/harness/protocol.tsv > $@.tmp && mv $@.tmp $@
share/man/geak-harness.7: $(PROTO_SRC)
	awk -v out=man -f share/harness/protogen.awk share/harness/protocol.tsv $@ > $@.tmp && mv $@.tmp $@

# Rebuild everything when the flags change (SANITIZE=1 and back).
$(BUILD_STAMP): FORCE
	@echo '$(ALL_CFLAGS) $(ALL_LDFLAGS)' | cmp -s - $@ || echo '$(ALL_CFLAGS) $(ALL_LDFLAGS)' > $@

lib/%.o: lib/%.c $(LIBHDR) $(BUILD_STAMP)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The secret-name rule's one copy, shared with the harness: one C string
# a mark.
lib/secretmarks.h: share/harness/secret-marks
	sed -n 's/^\([A-Z][A-Z]*\)$$/	"\1",/p' share/harness/secret-marks > $@.tmp && mv -f $@.tmp $@
lib/secrets.o: lib/secretmarks.h

lib/libgeak.a: $(LIBOBJ)
	rm -f $@
	$(AR) rcs $@ $(LIBOBJ)

bin/%: bin/%.c lib/libgeak.a $(LIBHDR) $(BUILD_STAMP)
	$(CC) $(ALL_CFLAGS) -o $@ $< lib/libgeak.a $(LIBS_$(@F)) $(JANSSON_LIBS) -lm $(ALL_LDFLAGS)

tests/unit/%: tests/unit/%.c lib/libgeak.a $(LIBHDR) $(BUILD_STAMP)
	$(CC) $(ALL_CFLAGS) -o $@ $< lib/libgeak.a $(CMOCKA_LIBS) $(CURL_LIBS) $(ARCHIVE_LIBS) $(JANSSON_LIBS) -lm $(ALL_LDFLAGS)

tests/helpers/%: tests/helpers/%.c lib/libgeak.a $(LIBHDR) $(BUILD_STAMP)
	$(CC) $(ALL_CFLAGS) -o $@ $< lib/libgeak.a $(JANSSON_LIBS) -lm $(ALL_LDFLAGS)

units: $(UNIT) $(HELPERS)

# The test files run side by side, PROVE_JOBS at a time, each in a
# scratch folder of its own with its own caches and GPU locks (tests/lib.sh).
# Many wait as much as they compute (a model's latency, Slurm, a stopped
# loop), so three at a time keep two cores busy.  PROVE_JOBS=1 runs them
# one by one.  The longest start first, so that
# the streams end together: tests/slowest names them, longest first (a
# name no longer there is passed over); every other file follows in name
# order.
PROVE_JOBS = 3
TESTS_ALL  = $(sort $(wildcard tests/*.t))
TESTS_SLOW = $(filter $(TESTS_ALL),$(shell cat tests/slowest))
TESTS      = $(TESTS_SLOW) $(filter-out $(TESTS_SLOW),$(TESTS_ALL))
check: all units
	@GEAK_SANITIZE='$(SANITIZE)' prove -j$(PROVE_JOBS) $(PROVE_FLAGS) $(TESTS)

# The record reader under libFuzzer.  Needs clang.
FUZZ_CC   = $(shell command -v clang 2>/dev/null || command -v clang-14 2>/dev/null || echo clang)
FUZZ_TIME = 60
tests/fuzz/fuzz-record: tests/fuzz/fuzz-record.c $(LIBSRC) $(LIBHDR)
	$(FUZZ_CC) -g -O1 -std=c11 -D_GNU_SOURCE -Ilib $(JANSSON_CFLAGS) \
		-DGEAK_VERSION='"$(VERSION)"' -DGEAK_SHAREDIR='"$(SHAREDIR)"' \
		-fsanitize=fuzzer,address,undefined -o $@ tests/fuzz/fuzz-record.c \
		lib/record.c lib/util.c $(JANSSON_LIBS)

fuzz: tests/fuzz/fuzz-record
	mkdir -p tests/fuzz/corpus
	tests/fuzz/fuzz-record -max_total_time=$(FUZZ_TIME) -max_len=4096 \
		tests/fuzz/corpus tests/fuzz/seeds

# Every tool that reads records, on mutated records (tests/fuzz/fuzz-tools.py)
# with a watchdog and a memory cap; `make SANITIZE=1 fuzz-tools` for the
# sanitizers' reports.  What it flags is kept in tests/fuzz/found.
fuzz-tools: all
	python3 tests/fuzz/fuzz-tools.py --seconds $(FUZZ_TIME) --out tests/fuzz/found

# Benchmarks (examples/bench/bench.sh): every reference evaluated as a
# candidate, then, with an LLM provider configured, the agent.
BENCH_DATA = ../shared/bench
bench: all
	sh examples/bench/bench.sh $(BENCH_DATA)
.PHONY: bench

# The whole agent on the bundled example task, offline (examples/demo.sh,
# which runs `make deps` when something is missing and builds first).
demo:
	@sh examples/demo.sh

# Set-up: Debian packages and the harness's Python environment, with the
# torch build for this machine's GPU (TORCH=auto) or the one named
# (TORCH=cuda, rocm or cpu); TORCH_INDEX=URL: the index torch comes from.
TORCH       ?= auto
TORCH_INDEX ?=
deps:
	@TORCH='$(TORCH)' TORCH_INDEX='$(TORCH_INDEX)' sh share/setup/deps.sh

# The loop drivers, installed as commands (geak-slurm runs geak-loop).
DRIVERS = bin/geak-loop.sh=geak-loop bin/geak-parallel.sh=geak-parallel bin/geak-slurm.sh=geak-slurm
# The Python an installed geak-eval runs its harness with, when neither
# --python nor GEAK_PYTHON says: this, else GEAK_PYTHON as make install
# runs, else this tree's .venv (by the venv's own path, which it needs),
# written into SHAREDIR/harness-python.
HARNESS_PYTHON =

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(SHAREDIR) \
		$(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7
	cp $(TOOLS) bin/geak-iter.sh $(DESTDIR)$(BINDIR)/
	for d in $(DRIVERS); do \
		cp "$${d%%=*}" "$(DESTDIR)$(BINDIR)/$${d#*=}" && chmod 755 "$(DESTDIR)$(BINDIR)/$${d#*=}" || exit 1; done
	cd share && find . -path ./man -prune -o -type f -print | while read -r f; do \
		mkdir -p "$(DESTDIR)$(SHAREDIR)/$${f%/*}" && cp "$$f" "$(DESTDIR)$(SHAREDIR)/$$f" || exit 1; done
	cp Makefile.inc $(DESTDIR)$(SHAREDIR)/
	py='$(HARNESS_PYTHON)'; [ -n "$$py" ] || py="$${GEAK_PYTHON:-}"; \
	if [ -z "$$py" ] && [ -x .venv/bin/python ]; then py="$$(cd .venv && pwd -P)/bin/python"; fi; \
	rm -f $(DESTDIR)$(SHAREDIR)/harness-python; \
	if [ -n "$$py" ]; then echo "$$py" > $(DESTDIR)$(SHAREDIR)/harness-python || exit 1; \
	else echo "make install: no Python for the harness found; set GEAK_PYTHON where geak-eval runs" >&2; fi
	$(if $(MAN1),cp $(MAN1) $(DESTDIR)$(MANDIR)/man1/)
	$(if $(MAN5),cp $(MAN5) $(DESTDIR)$(MANDIR)/man5/)
	$(if $(MAN7),cp $(MAN7) $(DESTDIR)$(MANDIR)/man7/)

uninstall:
	for t in $(notdir $(TOOLS)); do rm -f $(DESTDIR)$(BINDIR)/$$t; done
	for d in $(DRIVERS); do rm -f "$(DESTDIR)$(BINDIR)/$${d#*=}"; done
	rm -f $(DESTDIR)$(BINDIR)/geak-iter.sh
	rm -rf $(DESTDIR)$(SHAREDIR)
	for m in $(notdir $(MAN1)); do rm -f $(DESTDIR)$(MANDIR)/man1/$$m; done
	for m in $(notdir $(MAN5)); do rm -f $(DESTDIR)$(MANDIR)/man5/$$m; done
	for m in $(notdir $(MAN7)); do rm -f $(DESTDIR)$(MANDIR)/man7/$$m; done

clean:
	rm -f $(TOOLS) $(UNIT) $(HELPERS) lib/*.o lib/*/*.o lib/libgeak.a lib/secretmarks.h \
		tests/fuzz/fuzz-record $(BUILD_STAMP)

FORCE:

.PHONY: all units check fuzz fuzz-tools demo deps install uninstall clean FORCE
