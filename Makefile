# uabroker: one non-recursive GNU Makefile (docs/style.md §10).
#
#   make                 libproto.a, libshm.a, libhist.a, uabroker, uaworker
#   make run             install missing packages, build, run the broker
#   make check           install missing packages; unit and integration
#                        tests, tests/check-deps.sh, interop (CHECK_PROGS,
#                        CHECK_EXTRA below)
#   make SAN=1 check     the same with ASan+UBSan, objects in build/san/
#   make check-deps      include layering (docs/architecture.md §5)
#   make interop         interop tests with node-opcua (also in check)
#   make regen           regenerate proto/*_gen.* and broker/ns0_gen.*
#                        from $(SCHEMA)
#   make regen-check     regen, then fail if a committed generated file changed
#   make fuzz            libFuzzer targets, $(FUZZ_SECONDS) s each (clang)
#   make bench           server benchmark (uabench), docs/benchmarks.md
#   make bench-codec     codec benchmark, -O2, never sanitized
#   make bench-addrspace node store and value slots; the build at 10^3..10^6
#   make bench-nodeset   NodeSet2 import of 100,000 nodes: time, bytes/node
#   make bench-sub       the worker's notification path in memory
#   make bench-hist      the history store: ingest, bytes/sample, reads
#   make bench-hist-start the server's start-up with a 1 GiB history store
#   make bench-hist-read HistoryRead of 10,000 values through the server
#   make bench-hist-ingest historized changes through the broker, on/off
#   make bench-instr-hist the broker's instructions per change, on/off/+sub
#   make bench-hist-proc ReadProcessed Average per hour over a day, server
#   make bench-histmod   the cost of keeping modified values, their reads
#   make bench-histevent event history in the store: events/s, reads
#   make bench-histevent-read ReadEventDetails of 10,000 events through the
#                        server
#   make bench-mem       the worker's memory per session, subscription, item
#   make bench-aggregate the Part 13 aggregate engine, CPU per ReadProcessed
#   make bench-security  message security on the secure channel in memory
#   make bench-instr     write100's instructions per WriteValue (callgrind;
#                        INSTR_SCENARIO=read100, read1, browse: those instead)
#   make bench-ab        two builds through the server matrix, alternating
#                        (A=one/uabroker B=other/uabroker ROUNDS=2)
#   make deps            deploy/install-deps.sh
#   make install         PREFIX (/usr/local), DESTDIR, BINDIR, SYSCONFDIR...
#   make uninstall       the same files removed (not your uabroker.conf)
#   make clean           rm -rf build
#
# Variables: SAN=1, WERROR=1 (implied by CI=true in the environment),
# RUN_ARGS, BENCH_ARGS, BENCH_SECONDS, BENCH_WORKERS, BENCH_SERVER_ARGS,
# FUZZ_SECONDS (default 60), FUZZ_ARGS, SCHEMA (the directory of the OPC UA
# schema files (UA-Nodeset) the generators read: Opc.Ua.Types.bsd,
# NodeIds.csv, Opc.Ua.NodeSet2.xml ...; default ../shared/opcua-schema), CC,
# FUZZ_CC, PYTHON, LDFLAGS.

MAKEFLAGS += --no-builtin-rules
.SUFFIXES:
.DELETE_ON_ERROR:
.DEFAULT_GOAL := all

FUZZ_CC   ?= clang
PYTHON    ?= python3
PKG       ?= pkg-config
SCHEMA    ?= ../shared/opcua-schema
DEPS_CMD  ?= sh deploy/install-deps.sh

# ---------------------------------------------------------------- phase 1
#
# `make run` and `make check` must work on a machine that has none of the
# packages yet.  The libraries' flags come from pkg-config, and make asks
# it while it reads this file (the unit-test rules name their libraries in
# their prerequisites), so the packages must be installed before make
# reads the rest of it.  Phase 1 therefore reads nothing else: it installs
# what is missing ($(DEPS_CMD); check also wants the test tools and
# Node.js) and runs make again on the same goals with UA_DEPS_DONE=1
# (phase 2), which reads the whole file and finds pkg-config's answers.
# tests/build/check_fresh.sh proves it with a pkg-config that knows no
# package until the install step has run.
ifneq ($(filter run check,$(MAKECMDGOALS)),)
ifneq ($(UA_DEPS_DONE),1)
UA_PHASE1 := 1
endif
endif

ifeq ($(UA_PHASE1),1)

UA_DEPS_GROUPS := $(if $(filter check,$(MAKECMDGOALS)),--node --test)

.PHONY: $(MAKECMDGOALS) ua-phase2
ua-phase2:
	@$(DEPS_CMD) $(UA_DEPS_GROUPS)
	@$(MAKE) --no-print-directory UA_DEPS_DONE=1 $(MAKECMDGOALS)

$(MAKECMDGOALS): ua-phase2
	@:

else # phase 2, or any other goal: the whole Makefile

# ---------------------------------------------------------------- flags

CPPFLAGS  := -I.
DEPFLAGS  := -MMD -MP
CFLAGS    := -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wshadow \
             -Wstrict-prototypes -Wmissing-prototypes
# wolfSSL's "#warning ... harden options" means <wolfssl/options.h> was not
# included first (docs/dependencies.md gotcha 1): a silent ABI mismatch, so
# always fatal.
CFLAGS    += -Werror=cpp
LDFLAGS   ?=

ifeq ($(CI),true)
WERROR    := 1
endif
ifeq ($(WERROR),1)
CFLAGS    += -Werror
endif

SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
             -fno-sanitize-recover=undefined

# pkg-config runs once per variable, on first use (see phase 1 above for
# why `make run` and `make check` install the packages before that).
pkg = $(eval $(1) := $$(shell $(PKG) $(2)))$($(1))
EVENT_CFLAGS   = $(call pkg,EVENT_CFLAGS,--cflags libevent)
EVENT_LIBS     = $(call pkg,EVENT_LIBS,--libs libevent)
WOLFSSL_CFLAGS = $(call pkg,WOLFSSL_CFLAGS,--cflags wolfssl)
WOLFSSL_LIBS   = $(call pkg,WOLFSSL_LIBS,--libs wolfssl)
NANOMSG_CFLAGS = $(call pkg,NANOMSG_CFLAGS,--cflags nanomsg)
NANOMSG_LIBS   = $(call pkg,NANOMSG_LIBS,--libs nanomsg)
CHECK_CFLAGS   = $(call pkg,CHECK_CFLAGS,--cflags check)
CHECK_LIBS     = $(call pkg,CHECK_LIBS,--libs check)
INIH_CFLAGS    = $(call pkg,INIH_CFLAGS,--cflags inih)
INIH_LIBS      = $(call pkg,INIH_LIBS,--libs inih)
MOSQUITTO_CFLAGS = $(call pkg,MOSQUITTO_CFLAGS,--cflags libmosquitto)
MOSQUITTO_LIBS   = $(call pkg,MOSQUITTO_LIBS,--libs libmosquitto)
# libxml2: the broker's NodeSet importer (broker/nodeset.c) only.
XML2_CFLAGS    = $(call pkg,XML2_CFLAGS,--cflags libxml-2.0)
XML2_LIBS      = $(call pkg,XML2_LIBS,--libs libxml-2.0)
# LMDB: the history store (hist/store.c, its side databases, the events) only.
LMDB_CFLAGS    = $(call pkg,LMDB_CFLAGS,--cflags lmdb)
LMDB_LIBS      = $(call pkg,LMDB_LIBS,--libs lmdb)

LIB_CPPFLAGS = $(EVENT_CFLAGS) $(WOLFSSL_CFLAGS) $(NANOMSG_CFLAGS) \
               $(INIH_CFLAGS) $(MOSQUITTO_CFLAGS)
build/tests/unit/%.o build/san/tests/unit/%.o: LIB_CPPFLAGS += $(CHECK_CFLAGS)
build/broker/nodeset.o build/san/broker/nodeset.o: \
  LIB_CPPFLAGS += $(XML2_CFLAGS)
build/hist/store.o build/san/hist/store.o build/hist/side.o \
  build/san/hist/side.o build/hist/modified.o build/san/hist/modified.o \
  build/hist/annot.o build/san/hist/annot.o build/hist/events.o \
  build/san/hist/events.o: LIB_CPPFLAGS += $(LMDB_CFLAGS)

# Plain objects live in build/, sanitized ones in build/san/.  Both pattern
# rules exist side by side; bench-codec always links the plain libproto.a.
ifeq ($(SAN),1)
B        := build/san
B_FLAGS  := $(SAN_FLAGS)
else
B        := build
B_FLAGS  :=
endif

COMPILE = $(CC) $(CPPFLAGS) $(DEPFLAGS) $(LIB_CPPFLAGS) $(CFLAGS)

build/%.o: %.c
	@mkdir -p $(@D)
	$(COMPILE) -c -o $@ $<

build/san/%.o: %.c
	@mkdir -p $(@D)
	$(COMPILE) $(SAN_FLAGS) -c -o $@ $<

# ---------------------------------------------------------------- sources

PROTO_SRCS  := $(wildcard proto/*.c)
SHM_SRCS    := $(wildcard shm/*.c)
HIST_SRCS   := $(wildcard hist/*.c)
BROKER_SRCS := $(wildcard broker/*.c)
WORKER_SRCS := $(wildcard worker/*.c)
# Everything but main.c goes into lib<m>.a, so unit tests can link it.
BKLIB_SRCS  := $(filter-out broker/main.c,$(BROKER_SRCS))
WKLIB_SRCS  := $(filter-out worker/main.c worker/historian.c,$(WORKER_SRCS))

objs = $(patsubst %.c,$(1)/%.o,$(2))

PROTO_OBJS  := $(call objs,$(B),$(PROTO_SRCS))
SHM_OBJS    := $(call objs,$(B),$(SHM_SRCS))
HIST_OBJS   := $(call objs,$(B),$(HIST_SRCS))
BROKER_OBJS := $(call objs,$(B),$(BROKER_SRCS))
WORKER_OBJS := $(call objs,$(B),$(WORKER_SRCS))

LIBPROTO := $(B)/libproto.a
LIBSHM   := $(B)/libshm.a
LIBHIST  := $(B)/libhist.a
LIBBROKER := $(B)/libbroker.a
LIBWORKER := $(B)/libworker.a
UABROKER := $(B)/uabroker
UAWORKER := $(B)/uaworker
UAHISTORIAN := $(B)/uahistorian

# An archive is rebuilt from scratch so deleted sources leave no stale
# members.  Rules exist for both build/ and build/san/: bench-codec links
# build/libproto.a even when SAN=1.
define archive
$(1)/lib$(2).a: $(call objs,$(1),$(3))
	@mkdir -p $$(@D)
	rm -f $$@
	$$(AR) rcs $$@ $$^
endef
$(foreach d,build build/san,\
  $(eval $(call archive,$(d),proto,$(PROTO_SRCS)))\
  $(eval $(call archive,$(d),shm,$(SHM_SRCS)))\
  $(eval $(call archive,$(d),hist,$(HIST_SRCS)))\
  $(eval $(call archive,$(d),broker,$(BKLIB_SRCS)))\
  $(eval $(call archive,$(d),worker,$(WKLIB_SRCS))))

APP_LIBS = $(LIBSHM) $(LIBPROTO) $(EVENT_LIBS) $(NANOMSG_LIBS) \
           $(WOLFSSL_LIBS) -lm

$(UABROKER): $(B)/broker/main.o $(LIBBROKER) $(LIBHIST) $(LIBSHM) \
             $(LIBPROTO)
	$(CC) $(CFLAGS) $(B_FLAGS) $(LDFLAGS) -o $@ $(B)/broker/main.o \
	  $(LIBBROKER) $(LIBHIST) $(APP_LIBS) $(INIH_LIBS) $(MOSQUITTO_LIBS) \
	  $(XML2_LIBS) $(LMDB_LIBS)

$(UAWORKER): $(B)/worker/main.o $(LIBWORKER) $(LIBHIST) $(LIBSHM) \
            $(LIBPROTO)
	$(CC) $(CFLAGS) $(B_FLAGS) $(LDFLAGS) -o $@ $(B)/worker/main.o \
	  $(LIBWORKER) $(LIBHIST) $(APP_LIBS) $(LMDB_LIBS)

# The historian (issue 18): the worker's layers below svc, and the store.
$(UAHISTORIAN): $(B)/worker/historian.o $(LIBWORKER) $(LIBHIST) $(LIBSHM) \
                $(LIBPROTO)
	$(CC) $(CFLAGS) $(B_FLAGS) $(LDFLAGS) -o $@ $(B)/worker/historian.o \
	  $(LIBWORKER) $(LIBHIST) $(APP_LIBS) $(LMDB_LIBS)

.PHONY: all
all: $(LIBPROTO) $(LIBSHM) $(LIBHIST) $(UABROKER) $(UAWORKER) $(UAHISTORIAN)

# ---------------------------------------------------------------- unit tests
#
# tests/unit/<m>/check_<x>.c becomes $(B)/tests/unit/<m>/check_<x>, linked
# against $(B)/lib<m>.a only (plus Check and -lm), so the linker enforces
# the layering too.  UNIT_LIBS_<m> adds the one outside library module <m>
# may use.

UNIT_LIBS_proto  = $(WOLFSSL_LIBS)
UNIT_LIBS_shm    = $(NANOMSG_LIBS)
UNIT_LIBS_hist   = $(LMDB_LIBS)
# broker/ and worker/ stand on proto/ and shm/ (docs/architecture.md §5).
UNIT_LIBS_broker = $(B)/libhist.a $(B)/libshm.a $(B)/libproto.a \
                   $(INIH_LIBS) $(EVENT_LIBS) $(NANOMSG_LIBS) \
                   $(WOLFSSL_LIBS) $(MOSQUITTO_LIBS) $(XML2_LIBS) \
                   $(LMDB_LIBS)
# Worker tests link libworker.a and what it stands on, libshm.a and
# libproto.a (with libevent, nanomsg, wolfSSL), never libbroker.a.  The
# address space they serve is the real one all the same: the build tool
# tests/unit/worker/fixture_seg (linked with libbroker, a tool of the tests,
# not a test) builds it with the broker's builder once and writes the
# segment to $(WK_SEG_DIR)/default.seg and big.seg, which every worker test
# maps in a private copy (tests/unit/worker/fixture.h; FX_SEG_DIR says
# where).  Event records the broker would send are built in the tests from
# shm/fanout.h's record format with proto's codec
# (tests/unit/worker/event_fixture.h).
UNIT_LIBS_worker = $(B)/libhist.a $(B)/libshm.a $(B)/libproto.a \
                   $(EVENT_LIBS) $(NANOMSG_LIBS) $(WOLFSSL_LIBS) $(LMDB_LIBS)

WK_SEG_DIR  := $(B)/tests/unit/worker
WK_FIXTURE  := $(WK_SEG_DIR)/fixture_seg
WK_SEGS     := $(WK_SEG_DIR)/default.seg $(WK_SEG_DIR)/big.seg

$(WK_SEG_DIR)/%.o: LIB_CPPFLAGS += -DFX_SEG_DIR='"$(WK_SEG_DIR)"'

$(WK_FIXTURE): $(WK_SEG_DIR)/fixture_seg.o $(B)/libbroker.a $(B)/libshm.a \
               $(B)/libproto.a
	$(CC) $(CFLAGS) $(B_FLAGS) $(LDFLAGS) -o $@ $^ $(INIH_LIBS) \
	  $(EVENT_LIBS) $(NANOMSG_LIBS) $(WOLFSSL_LIBS) $(XML2_LIBS) \
	  $(MOSQUITTO_LIBS) -lm

# One run writes both (grouped target: the tool rebuilt, both again).
$(WK_SEGS) &: $(WK_FIXTURE)
	./$(WK_FIXTURE) $(WK_SEG_DIR)

-include $(wildcard $(WK_SEG_DIR)/fixture_seg.d)

UNIT_SRCS    := $(sort $(wildcard tests/unit/*/check_*.c))
UNIT_MODULES := $(sort $(patsubst tests/unit/%/,%,$(dir $(UNIT_SRCS))))
UNIT_TESTS   := $(patsubst %.c,$(B)/%,$(UNIT_SRCS))

define unit_module
$(filter $(B)/tests/unit/$(1)/%,$(UNIT_TESTS)): \
  $(B)/tests/unit/$(1)/%: $(B)/tests/unit/$(1)/%.o $(B)/lib$(1).a \
  $(filter %.a,$(UNIT_LIBS_$(1)))
	$$(CC) $$(CFLAGS) $$(CHECK_CFLAGS) $$(B_FLAGS) $$(LDFLAGS) -o $$@ $$< \
	  $(B)/lib$(1).a \
	  $$(UNIT_LIBS_$(1)) $$(CHECK_LIBS) -lm
endef
$(foreach m,$(UNIT_MODULES),$(eval $(call unit_module,$(m))))

# The worker tests map the segments (order-only: a test need not relink
# when the address space is rebuilt).
$(filter $(B)/tests/unit/worker/%,$(UNIT_TESTS)): | $(WK_SEGS)

# ---------------------------------------------------------------- check
#
# Every program in CHECK_PROGS is built, run from the repository root, and
# counted in the closing "N passed, M failed" line that CI reads, in the
# order below.  Then check-deps runs, then the targets in CHECK_EXTRA.
#
# tests/integ/<t>.c becomes $(B)/tests/integ/<t> (one rule for all, in
# "integ" below); each starts $(UABROKER) itself, found next to its own
# build directory.

INTEG := $(B)/tests/integ

CHECK_PROGS := $(UNIT_TESTS)
CHECK_EXTRA :=

# The bad-input cases of docs/security.md against a broker with 2 workers
# (tests/integ/check_badinput.c).
CHECK_PROGS += $(INTEG)/check_badinput
# Interop with node-opcua: tests/interop/run.sh (the interop rule below).
CHECK_EXTRA += interop
# The whole server on loopback: uabroker -w 2, every service, /stats,
# kill -9 of a worker, clean stop (tests/integ/integ_server.c).
CHECK_PROGS += $(INTEG)/integ_server
# The fan-out's data path: Write through the broker read back on the other
# worker, every Static type, the refusals, `uabroker feed`, no allocation
# per Write, a dead worker's block references reclaimed
# (tests/integ/integ_fanout.c).
CHECK_PROGS += $(INTEG)/integ_fanout
# Subscriptions across processes: every value in order on both workers,
# silent subscribers hold no block, kill -9 of a worker loses nothing on
# the other, PercentDeadband (tests/integ/integ_sub.c).
CHECK_PROGS += $(INTEG)/integ_sub
# Secured channels and sessions: every policy, the trust list, rejected/,
# SIGHUP reload, users (tests/integ/integ_security.c).
CHECK_PROGS += $(INTEG)/integ_security
# The attacks of docs/security.md on secured channels and sessions:
# reflection, relay, replay, hijack, padding/MAC oracle, legacy secrets,
# certificates (tests/integ/integ_attack.c).
CHECK_PROGS += $(INTEG)/integ_attack
# RSA work does not stall the loop: a secured-session loop beside a None
# reader on one worker; /stats loop fields (tests/integ/integ_rsa.c).
CHECK_PROGS += $(INTEG)/integ_rsa
# A connect flood against the accept limiter while a subscription keeps
# publishing (docs/security.md cases 10 and 86; tests/integ/integ_flood.c).
CHECK_PROGS += $(INTEG)/integ_flood
# A worker's promise to wake by its next publishing tick: deferred bells,
# no value late, sampling from the changes' time
# (tests/integ/integ_wakeby.c).
CHECK_PROGS += $(INTEG)/integ_wakeby
# A session whose connection dropped, reactivated on a new channel on
# its worker: every value written meanwhile, from a writer on another
# worker or on its own, arrives once and in order
# (tests/integ/integ_reactivate.c).
CHECK_PROGS += $(INTEG)/integ_reactivate
# Configured alarms: -t, limit and off-normal transitions as condition
# events, the deadband, the condition's variables in a Read
# (tests/integ/integ_alarm.c).
CHECK_PROGS += $(INTEG)/integ_alarm
# Any worker serves any session: a session activated on a channel of
# another worker moves there with its subscription, its sequence numbers
# and kept messages; forged tokens refused (tests/integ/integ_roam.c).
CHECK_PROGS += $(INTEG)/integ_roam
# A worker's death is a reconnect: kill -9 of the worker holding a
# session, its successor takes it over from the park, every value (queued
# in the dead worker, written while it was dead) arrives, Republish; a
# session whose client never comes back times out; a park too small
# counts (tests/integ/integ_kill.c).
CHECK_PROGS += $(INTEG)/integ_kill
# A rolling restart (restart-workers, SIGUSR2) under load keeps the
# session, its subscription and every value (tests/integ/integ_roll.c).
CHECK_PROGS += $(INTEG)/integ_roll
# Sessions never activated cannot lock out real clients: the cap per
# address at the limit, a flood of 500 from 50 addresses and from one,
# the oldest evicted, a real client gets in (tests/integ/integ_sessions.c).
CHECK_PROGS += $(INTEG)/integ_sessions
# The simulated Demo.Vars (addrspace.simulation_vars): the limit, every
# tick in Read and over a subscription (tests/integ/integ_sim.c).
CHECK_PROGS += $(INTEG)/integ_sim
# The historian and the history store (issue 18): every simulated tick
# kept in order, `uabroker history`, kill -9 of the historian with
# nothing committed lost, a restart keeping the history
# (tests/integ/integ_history.c).
CHECK_PROGS += $(INTEG)/integ_history
# Part 13's example tables through the whole server: HistoryUpdate Insert
# of the raw tables, every aggregate read back by ReadProcessed
# (tests/integ/integ_hist_p13.c).
CHECK_PROGS += $(INTEG)/integ_hist_p13
# The data collection rules of Part 11 §5.2.2 (MinTimeInterval,
# ExceptionDeviation, MaxTimeInterval) applied by the historian
# (tests/integ/integ_hist_collect.c).
CHECK_PROGS += $(INTEG)/integ_hist_collect
# Modified values and annotations through the whole server: HistoryUpdate
# keeping what it changes, isReadModified with paging, annotations through
# the Annotations Property, the bad input, a viewer refused
# (tests/integ/integ_hist_mod.c).
CHECK_PROGS += $(INTEG)/integ_hist_mod
# Event history: feed events read back by ReadEventDetails on the Server
# and on a notifier under it, pages, a where clause, bad input, a restart
# (tests/integ/integ_histevent.c).
CHECK_PROGS += $(INTEG)/integ_histevent
# The feed waits for a historian that is behind instead of exhausting the
# block pool; without the wait every event lost is counted
# (tests/integ/integ_feedwait.c).
CHECK_PROGS += $(INTEG)/integ_feedwait
# The MQTT feed: two brokers fed by one mosquitto, the size limit, the
# MQTT broker killed and restarted, TLS, a password, a silent peer, a kept
# session (tests/integ/integ_mqtt.c).
CHECK_PROGS += $(INTEG)/integ_mqtt
# `make run` on a machine without the packages: installs, then builds
# (phase 1 at the top; tests/build/check_fresh.sh).
CHECK_PROGS += tests/build/check_fresh.sh
# tests/check-deps.sh itself on fake trees: circles, upward includes,
# files in no layer, a good tree (tests/build/check_deps_test.sh).
CHECK_PROGS += tests/build/check_deps_test.sh
# Method calls forwarded to the method owner (`uabroker methods --exec`):
# outputs on both workers, BadTimeout, argument checks, a Read not
# stalled behind a waiting Call (tests/integ/integ_methods.c).
CHECK_PROGS += $(INTEG)/integ_methods
# GET /metrics after traffic passes `promtool check metrics` and our own
# exposition rules (tests/integ/integ_metrics.c; promtool from
# deploy/install-deps.sh --test).
CHECK_PROGS += $(INTEG)/integ_metrics
# systemd's notification protocol: READY=1 once the workers serve,
# RELOADING=1/READY=1 around SIGHUP, STOPPING=1 (tests/integ/integ_notify.c).
CHECK_PROGS += $(INTEG)/integ_notify
# make install / uninstall into a scratch DESTDIR: the tree, the modes, the
# unit (systemd-analyze verify when present), the installed broker serving
# (tests/install/check_install.sh, a committed executable script).
CHECK_PROGS += tests/install/check_install.sh
tests/install/check_install.sh: | $(UABROKER) $(UAWORKER) $(UAHISTORIAN)
# SIGHUP re-reads the configuration file: live settings take effect,
# restart-only ones are logged and kept, a broken file is refused
# (tests/integ/integ_reload.c).
CHECK_PROGS += $(INTEG)/integ_reload
# Events from the feed to clients on two workers, the event queue limit
# and its overflow event (tests/integ/integ_event.c).
CHECK_PROGS += $(INTEG)/integ_event

# Check's per-test timeouts (default 4 s, or a suite's own) stretched for
# the slower sanitized build; an explicit CK_TIMEOUT_MULTIPLIER wins.
ifeq ($(SAN),1)
CK_TIMEOUT_MULTIPLIER ?= 3
export CK_TIMEOUT_MULTIPLIER
endif

.PHONY: check check-unit
check: check-unit
	@sh tests/check-deps.sh
	$(if $(strip $(CHECK_EXTRA)),\
	  $(MAKE) --no-print-directory $(CHECK_EXTRA))

check-unit: $(CHECK_PROGS)
	@pass=0; fail=0; failed=; \
	for t in $(CHECK_PROGS); do \
	    echo "---- $$t"; \
	    if ./$$t; then \
	        echo "PASS: $$t"; pass=$$((pass + 1)); \
	    else \
	        rc=$$?; echo "FAIL: $$t (exit $$rc)"; \
	        fail=$$((fail + 1)); failed="$$failed $$t"; \
	    fi; \
	done; \
	echo "----"; \
	for t in $$failed; do echo "failed: $$t"; done; \
	echo "$$pass passed, $$fail failed"; \
	test $$fail -eq 0

.PHONY: check-deps
check-deps:
	@sh tests/check-deps.sh && echo "check-deps: include layering ok"

# ---------------------------------------------------------------- integ
#
# tests/integ/<t>.c + the blocking test client tests/lib/uaconn.c (and its
# counting subscriber tests/lib/itcount.c, the history programs' harness
# tests/lib/ihist.c, the event item tests/lib/itevent.c) + the
# process harness tests/lib/itest.c + libproto.a, and what a program needs
# beyond that in INTEG_LIBS / INTEG_LDFLAGS, set for its target below.  The
# broker and the worker are order-only prerequisites: built first, but a
# new broker does not relink the tests.  A program here missing from
# CHECK_PROGS above stops make, so none is silently never run.

INTEG_PROGS := $(patsubst tests/integ/%.c,$(INTEG)/%, \
                 $(wildcard tests/integ/*.c))
INTEG_LIB_OBJS := $(B)/tests/lib/uaconn.o $(B)/tests/lib/itest.o \
                  $(B)/tests/lib/itcount.o $(B)/tests/lib/ihist.o \
                  $(B)/tests/lib/itevent.o

$(if $(filter-out $(CHECK_PROGS),$(INTEG_PROGS)),$(error \
  $(filter-out $(CHECK_PROGS),$(INTEG_PROGS)) not in CHECK_PROGS))

# integ_fanout attaches the segment (libshm) to set interest bits of a
# worker it then stops and kills.
$(INTEG)/integ_fanout: $(LIBSHM)
$(INTEG)/integ_fanout: INTEG_LIBS = $(LIBSHM) $(NANOMSG_LIBS)
# integ_mqtt publishes through libmosquitto (mosquitto itself comes from
# deploy/install-deps.sh --test).
$(INTEG)/integ_mqtt: INTEG_LIBS = $(MOSQUITTO_LIBS)
# integ_server and integ_sub read on a second thread.
$(INTEG)/integ_server $(INTEG)/integ_sub: INTEG_LDFLAGS = -pthread

$(INTEG_PROGS): $(INTEG)/%: $(INTEG)/%.o $(INTEG_LIB_OBJS) $(LIBPROTO) \
                | $(UABROKER) $(UAWORKER) $(UAHISTORIAN)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(B_FLAGS) $(LDFLAGS) $(INTEG_LDFLAGS) -o $@ \
	  $(filter %.o,$^) $(INTEG_LIBS) $(LIBPROTO) $(WOLFSSL_LIBS) -lm

# ---------------------------------------------------------------- interop
#
# node-opcua 2.182.0 against the broker (tests/interop/run.sh: npm ci when
# node_modules is missing, a broker with 2 workers on free ports, node
# --test, the broker stopped whatever happens).  Node.js and npm come from
# deploy/install-deps.sh --node.

.PHONY: interop
interop: $(UABROKER) $(UAWORKER) $(UAHISTORIAN)
	@$(DEPS_CMD) --node
	UABROKER=$(UABROKER) sh tests/interop/run.sh

# ---------------------------------------------------------------- run, deps

.PHONY: run deps
run: all
	./$(UABROKER) $(RUN_ARGS)

deps:
	$(DEPS_CMD)

# ---------------------------------------------------------------- install
#
# make install [DESTDIR=...] [PREFIX=/usr/local]: uabroker and uaworker side
# by side in BINDIR (the broker execs the uaworker next to its own binary),
# the configuration in SYSCONFDIR/uabroker/uabroker.conf (deploy/
# uabroker.conf with the sockets in /run/uabroker and the PKI in
# /var/lib/uabroker, what the unit provides; an existing file is never
# overwritten: the new one goes beside it as uabroker.conf.dist), the
# systemd unit (deploy/uabroker.service.in, paths filled in) in
# SYSTEMDUNITDIR, the sysusers.d entry of the uabroker user, the docs.
# make uninstall removes all of that but a uabroker.conf (yours).

PREFIX         ?= /usr/local
BINDIR         ?= $(PREFIX)/bin
SYSCONFDIR     ?= /etc
DOCDIR         ?= $(PREFIX)/share/doc/uabroker
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR    ?= $(PREFIX)/lib/sysusers.d
INSTALL        ?= install
INSTALL_DOCS   := README.md docs/operations.md docs/configuration.md \
                  docs/feed.md docs/interop.md docs/subscriptions.md

.PHONY: install uninstall
install: $(UABROKER) $(UAWORKER) $(UAHISTORIAN)
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SYSCONFDIR)/uabroker \
	  $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSUSERSDIR) \
	  $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 0755 $(UABROKER) $(UAWORKER) $(UAHISTORIAN) $(DESTDIR)$(BINDIR)/
	sed -e 's|^runtime_dir = .*|runtime_dir = /run/uabroker|' \
	    -e 's|^pki_dir = .*|pki_dir = /var/lib/uabroker/pki|' \
	    -e 's|^dir = history$$|dir = /var/lib/uabroker/history|' \
	    deploy/uabroker.conf > $(B)/uabroker.conf.install
	@conf=$(DESTDIR)$(SYSCONFDIR)/uabroker/uabroker.conf; \
	if [ -e "$$conf" ]; then \
	    echo "install: $$conf exists, kept; the new one is" \
	         "$$conf.dist"; \
	    $(INSTALL) -m 0644 $(B)/uabroker.conf.install "$$conf.dist"; \
	else \
	    $(INSTALL) -m 0644 $(B)/uabroker.conf.install "$$conf"; \
	fi
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' \
	    -e 's|@DOCDIR@|$(DOCDIR)|g' deploy/uabroker.service.in \
	    > $(B)/uabroker.service
	$(INSTALL) -m 0644 $(B)/uabroker.service $(DESTDIR)$(SYSTEMDUNITDIR)/
	$(INSTALL) -m 0644 deploy/uabroker.sysusers \
	  $(DESTDIR)$(SYSUSERSDIR)/uabroker.conf
	$(INSTALL) -m 0644 $(INSTALL_DOCS) $(DESTDIR)$(DOCDIR)/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/uabroker $(DESTDIR)$(BINDIR)/uaworker \
	  $(DESTDIR)$(BINDIR)/uahistorian \
	  $(DESTDIR)$(SYSTEMDUNITDIR)/uabroker.service \
	  $(DESTDIR)$(SYSUSERSDIR)/uabroker.conf \
	  $(DESTDIR)$(SYSCONFDIR)/uabroker/uabroker.conf.dist \
	  $(addprefix $(DESTDIR)$(DOCDIR)/,$(notdir $(INSTALL_DOCS)))
	-rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null
	@conf=$(DESTDIR)$(SYSCONFDIR)/uabroker/uabroker.conf; \
	if [ -e "$$conf" ]; then \
	    echo "uninstall: $$conf kept (remove it by hand)"; \
	fi

# ---------------------------------------------------------------- regen
#
# The generators are Python 3 standard library only and run only here; their
# output is committed, so a plain build needs neither Python nor the schema.

.PHONY: regen regen-check
regen:
	@test -d $(SCHEMA) || { \
	    echo "regen: schema directory '$(SCHEMA)' not found;" \
	         "set SCHEMA=<dir holding the OPC UA schema files>" >&2; \
	    exit 1; }
	$(PYTHON) proto/gen/gen_types.py $(SCHEMA) proto
	$(PYTHON) proto/gen/gen_nodeids.py $(SCHEMA) proto
	$(PYTHON) proto/gen/gen_status.py $(SCHEMA) proto
	$(PYTHON) proto/gen/gen_attrs.py $(SCHEMA) proto
	$(PYTHON) broker/gen/gen_ns0.py $(SCHEMA) broker
	$(PYTHON) tests/vectors/gen_aggregates.py $(SCHEMA) tests/vectors

# Fails when regen changes a tracked file under proto/ or broker/ (or the
# generated test vectors REGEN_VECTORS) or creates a file there that is not
# committed (files untracked before regen are left alone).
REGEN_VECTORS := tests/vectors/aggregates_gen.h
regen-check:
	@git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { \
	    echo "regen-check: not a git work tree" >&2; exit 1; }
	@mkdir -p build
	@git ls-files --others --exclude-standard -- proto broker $(REGEN_VECTORS) | sort \
	    > build/regen-untracked.before
	$(MAKE) --no-print-directory regen
	@git ls-files --others --exclude-standard -- proto broker $(REGEN_VECTORS) | sort \
	    > build/regen-untracked.after
	@new=$$(comm -13 build/regen-untracked.before \
	                 build/regen-untracked.after); \
	if [ -n "$$new" ]; then \
	    echo "regen-check: regen created files that are not" \
	         "committed:" >&2; \
	    echo "$$new" >&2; exit 1; \
	fi
	@git diff --exit-code --stat -- proto broker $(REGEN_VECTORS) || { \
	    echo "regen-check: generated files under proto/ differ from what" \
	         "regen makes from $(SCHEMA); run 'make regen' and commit" \
	         "the result (or fix the generator)" >&2; \
	    exit 1; }
	@echo "regen-check: generated files are up to date"

# ---------------------------------------------------------------- fuzz
#
# tests/fuzz/fuzz_<t>.c is built with clang together with proto/*.c into
# build/fuzz/fuzz_<t>.  Its committed seed corpus tests/fuzz/corpus/fuzz_<t>/
# is copied to build/fuzz/corpus/fuzz_<t>/ and libFuzzer writes only there;
# crash/leak/timeout files go to build/fuzz/artifacts/fuzz_<t>/.  An optional
# dictionary tests/fuzz/fuzz_<t>.dict is passed with -dict.

FUZZ_SECONDS ?= 60
FUZZ_ARGS    ?= -timeout=10
FUZZ_FLAGS    = -std=c11 -D_GNU_SOURCE -g -O1 -Werror=cpp \
                -fsanitize=fuzzer,address,undefined \
                -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
                $(CPPFLAGS) $(DEPFLAGS) $(WOLFSSL_CFLAGS)

FUZZ_SRCS       := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_TARGETS    := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRCS))
FUZZ_PROTO_OBJS := $(patsubst %.c,build/fuzz/obj/%.o,$(PROTO_SRCS))

build/fuzz/obj/%.o: %.c
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -c -o $@ $<

$(FUZZ_TARGETS): build/fuzz/%: build/fuzz/obj/tests/fuzz/%.o $(FUZZ_PROTO_OBJS)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $^ $(WOLFSSL_LIBS) -lm

.PHONY: fuzz fuzz-check-cc
fuzz-check-cc:
	@command -v $(FUZZ_CC) >/dev/null 2>&1 || { \
	    echo "fuzz: $(FUZZ_CC) not found;" \
	         "run deploy/install-deps.sh --fuzz" >&2; \
	    exit 1; }

$(FUZZ_TARGETS) $(FUZZ_PROTO_OBJS): | fuzz-check-cc

fuzz: $(FUZZ_TARGETS)
	@set -e; \
	if [ -z "$(FUZZ_TARGETS)" ]; then \
	    echo "fuzz: no targets (tests/fuzz/fuzz_*.c)"; exit 0; \
	fi; \
	for f in $(FUZZ_TARGETS); do \
	    t=$${f##*/}; \
	    rm -rf build/fuzz/corpus/$$t; \
	    mkdir -p build/fuzz/corpus/$$t build/fuzz/artifacts/$$t; \
	    if [ -d tests/fuzz/corpus/$$t ]; then \
	        cp -R tests/fuzz/corpus/$$t/. build/fuzz/corpus/$$t/; \
	    fi; \
	    dict=; \
	    if [ -f tests/fuzz/$$t.dict ]; then \
	        dict=-dict=tests/fuzz/$$t.dict; \
	    fi; \
	    echo "---- $$t: $(FUZZ_SECONDS) s"; \
	    ./$$f -max_total_time=$(FUZZ_SECONDS) \
	        -artifact_prefix=build/fuzz/artifacts/$$t/ $$dict $(FUZZ_ARGS) \
	        build/fuzz/corpus/$$t || { \
	        echo "fuzz: $$t failed; input saved in" \
	             "build/fuzz/artifacts/$$t/," \
	             "replay with ./$$f <file>" >&2; exit 1; }; \
	done

# ---------------------------------------------------------------- bench

BENCH_CODEC := build/bench/bench_codec

# benchlib.c: the clock, median and --markdown section rewrite of the
# micro benchmarks below.
BENCHLIB_OBJ := build/tests/bench/benchlib.o

$(BENCH_CODEC): build/tests/bench/bench_codec.o $(BENCHLIB_OBJ) build/libproto.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(WOLFSSL_LIBS) -lm

.PHONY: bench-codec
bench-codec: $(BENCH_CODEC)
	./$(BENCH_CODEC) $(BENCH_ARGS)

BENCH_AGGREGATE := build/bench/bench_aggregate

# The Part 13 aggregate engine alone (issue 18): CPU per ReadProcessed.
$(BENCH_AGGREGATE): build/tests/bench/bench_aggregate.o $(BENCHLIB_OBJ) \
                    build/libproto.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(WOLFSSL_LIBS) -lm

.PHONY: bench-aggregate
bench-aggregate: $(BENCH_AGGREGATE)
	./$(BENCH_AGGREGATE) $(BENCH_ARGS)

BENCH_ADDRSPACE := build/bench/bench_addrspace

$(BENCH_ADDRSPACE): build/tests/bench/bench_addrspace.o $(BENCHLIB_OBJ) \
                    build/libshm.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ -lm

# Node-store and value-slot micro benchmarks, then the whole build at
# 1,000 / 100,000 / 1,000,000 variables (uabroker --once).
.PHONY: bench-addrspace
bench-addrspace: $(BENCH_ADDRSPACE) build/uabroker
	./$(BENCH_ADDRSPACE) $(BENCH_ARGS)
	sh tests/bench/bench_build.sh build/uabroker $(BENCH_ARGS)

# The history store alone (tests/bench/bench_hist.c): ingest values/s,
# bytes per sample, HistoryRead raw per value, a day's hourly average,
# start-up with a 1 GiB store; BENCH_ARGS="[dir [GiB]]".
BENCH_HIST := build/bench/bench_hist

$(BENCH_HIST): build/tests/bench/bench_hist.o $(BENCHLIB_OBJ) build/libhist.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LMDB_LIBS) -lm

.PHONY: bench-hist
bench-hist: $(BENCH_HIST)
	./$(BENCH_HIST) $(BENCH_ARGS)

# The whole server's start-up with a 1 GiB store (tests/bench/
# bench_hist_start.c): the historian serving, /stats up, a first
# HistoryRead answered; the store filled once in BENCH_DIR (default
# /tmp/uabroker-start-store, kept for the next run).
BENCH_HIST_START := build/bench/bench_hist_start
BENCH_DIR ?= /tmp/uabroker-start-store

$(BENCH_HIST_START): build/tests/bench/bench_hist_start.o $(BENCHLIB_OBJ) \
                     build/tests/lib/uaconn.o build/libhist.a build/libproto.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LMDB_LIBS) $(WOLFSSL_LIBS) -lm

.PHONY: bench-hist-start
bench-hist-start: $(BENCH_HIST_START) build/uabroker build/uaworker \
                  build/uahistorian
	set -- $$(python3 tests/lib/free-ports.py 2) && \
	    ./$(BENCH_HIST_START) build/uabroker $(BENCH_DIR) 1 $$1 $$2 \
	    $(BENCH_ARGS)

-include $(wildcard build/tests/bench/bench_hist_start.d)

# Event history in the store alone (tests/bench/bench_histevent.c): events
# recorded per second, bytes per event, reads per event;
# BENCH_ARGS="[dir]".
BENCH_HISTEVENT := build/bench/bench_histevent

$(BENCH_HISTEVENT): build/tests/bench/bench_histevent.o $(BENCHLIB_OBJ) \
                    build/libhist.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LMDB_LIBS) -lm

.PHONY: bench-histevent
bench-histevent: $(BENCH_HISTEVENT)
	./$(BENCH_HISTEVENT) $(BENCH_ARGS)

-include $(wildcard build/tests/bench/bench_histevent.d)

# ReadEventDetails of 10,000 events through the whole server, node-opcua as
# the client, and the historian's CPU per event recorded
# (tests/bench/bench_histevent_read.sh; BENCH_ARGS="[uabroker [reads]]").
.PHONY: bench-histevent-read
bench-histevent-read: build/uabroker build/uaworker build/uahistorian
	sh tests/bench/bench_histevent_read.sh $(BENCH_ARGS)

-include $(wildcard build/tests/bench/bench_hist.d)

# The cost of keeping modified values (tests/bench/bench_histmod.c):
# HistoryUpdate Replace with and without the old value kept, bytes per
# kept value, a read with isReadModified; BENCH_ARGS="[dir]".
BENCH_HISTMOD := build/bench/bench_histmod

$(BENCH_HISTMOD): build/tests/bench/bench_histmod.o $(BENCHLIB_OBJ) \
                  build/libhist.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LMDB_LIBS) -lm

.PHONY: bench-histmod
bench-histmod: $(BENCH_HISTMOD)
	./$(BENCH_HISTMOD) $(BENCH_ARGS)

-include $(wildcard build/tests/bench/bench_histmod.d)

# HistoryRead raw of 10,000 values through the whole server, node-opcua as
# the client (tests/bench/bench_hist_read.sh; BENCH_ARGS="[uabroker
# [reads]]"; node-opcua from tests/interop: make interop once).
.PHONY: bench-hist-read
bench-hist-read: build/uabroker build/uaworker build/uahistorian
	sh tests/bench/bench_hist_read.sh $(BENCH_ARGS)

# History end to end (docs/benchmarks.md "History: end to end"):
# historized changes through the broker, history off and on alternating
# (tests/bench/bench_hist_ingest.sh; BENCH_ARGS="[uabroker [vars
# [seconds [rounds]]]]"), and ReadProcessed Average per hour over a day
# through the server (tests/bench/bench_hist_proc.sh, node-opcua from
# tests/interop; BENCH_ARGS="[uabroker [reads]]").
.PHONY: bench-hist-ingest bench-hist-proc
bench-hist-ingest: $(UABENCH) build/uabroker build/uaworker build/uahistorian
	sh tests/bench/bench_hist_ingest.sh $(BENCH_ARGS)

bench-hist-proc: build/uabroker build/uaworker build/uahistorian
	sh tests/bench/bench_hist_proc.sh $(BENCH_ARGS)

# The alarm evaluator's cost per value change and the alarm storm's per
# condition event, in the broker (tests/bench/bench_alarm.c);
# BENCH_ARGS="[alarms] [--markdown docs/benchmarks.md]".
BENCH_ALARM := build/bench/bench_alarm

$(BENCH_ALARM): build/tests/bench/bench_alarm.o $(BENCHLIB_OBJ) \
                build/libbroker.a build/libshm.a build/libproto.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(APP_LIBS) $(INIH_LIBS) \
	  $(MOSQUITTO_LIBS) $(XML2_LIBS) -lm

.PHONY: bench-alarm
bench-alarm: $(BENCH_ALARM)
	./$(BENCH_ALARM) $(BENCH_ARGS)

# Their header dependencies (a struct of broker/ that grows rebuilds them).
-include $(wildcard build/tests/bench/bench_alarm.d \
    $(B)/tests/bench/bench_alarm_storm.d)

# The alarm storm end to end (tests/bench/bench_alarm_storm.c): 10,000
# alarms going active, delivered to 20 subscribers of the Server object;
# BENCH_ARGS="[alarms [subscribers]] [--markdown docs/benchmarks.md]".
BENCH_STORM := $(B)/tests/bench/bench_alarm_storm

$(BENCH_STORM): $(B)/tests/bench/bench_alarm_storm.o $(BENCHLIB_OBJ) \
                $(INTEG_LIB_OBJS) $(LIBPROTO) | $(UABROKER) $(UAWORKER)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(B_FLAGS) $(LDFLAGS) -o $@ $(filter %.o,$^) \
	  $(LIBPROTO) $(WOLFSSL_LIBS) -lm

.PHONY: bench-alarm-storm
bench-alarm-storm: $(BENCH_STORM)
	./$(BENCH_STORM) $(BENCH_ARGS)

# NodeSet2 import: a 100,000-node model (tests/bench/gen_nodeset.py) built
# with uabroker --once; import time and shared memory per node
# (tests/bench/bench_nodeset.sh; BENCH_ARGS="[nodes]").
.PHONY: bench-nodeset
bench-nodeset: build/uabroker
	sh tests/bench/bench_nodeset.sh build/uabroker $(BENCH_ARGS)

# The worker's notification path in memory (tests/bench/bench_sub.c): CPU
# ns per delivered notification for the fan-out and for Publish, the shape
# of the sub row without sockets; BENCH_ARGS="[items [subs [changes per
# publish [publishes]]]]".  Run it under callgrind for instructions.
BENCH_SUB := build/bench/bench_sub

build/tests/bench/bench_sub.o: LIB_CPPFLAGS += $(CHECK_CFLAGS)

$(BENCH_SUB): build/tests/bench/bench_sub.o build/libworker.a \
              build/libhist.a build/libshm.a build/libproto.a \
              | build/tests/unit/worker/default.seg
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(LDFLAGS) -o $@ $^ \
	  $(EVENT_LIBS) $(NANOMSG_LIBS) $(WOLFSSL_LIBS) $(CHECK_LIBS) \
	  $(LMDB_LIBS) -lm

.PHONY: bench-sub
bench-sub: $(BENCH_SUB)
	./$(BENCH_SUB) $(BENCH_ARGS)

-include $(wildcard build/tests/bench/bench_sub.d)

# The worker's memory per session, subscription and monitored item
# (tests/bench/bench_mem.c): reserved per configured slot and resident per
# live object, at rest and with 100 values queued; BENCH_ARGS="[N]".
BENCH_MEM := build/bench/bench_mem

build/tests/bench/bench_mem.o: LIB_CPPFLAGS += $(CHECK_CFLAGS)

$(BENCH_MEM): build/tests/bench/bench_mem.o build/libworker.a \
              build/libshm.a build/libproto.a | build/tests/unit/worker/default.seg
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(CHECK_CFLAGS) $(LDFLAGS) -o $@ $^ \
	  $(EVENT_LIBS) $(NANOMSG_LIBS) $(WOLFSSL_LIBS) $(CHECK_LIBS) -lm

.PHONY: bench-mem
bench-mem: $(BENCH_MEM)
	./$(BENCH_MEM) $(BENCH_ARGS)

-include $(wildcard build/tests/bench/bench_mem.d)

# Message security on the secure channel state machines in memory: server
# CPU per Read round trip for None and every RSA policy x Sign /
# SignAndEncrypt, and per OpenSecureChannel (tests/bench/bench_sc_security.c).
# BENCH_ARGS="<round trips> <handshakes>"; -O2, the plain libproto.a.
BENCH_SECURITY := build/bench/bench_sc_security

$(BENCH_SECURITY): build/tests/bench/bench_sc_security.o $(BENCHLIB_OBJ) \
                   build/libproto.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(WOLFSSL_LIBS) -lm

.PHONY: bench-security
bench-security: $(BENCH_SECURITY)
	./$(BENCH_SECURITY) $(BENCH_ARGS)

-include $(wildcard build/tests/bench/bench_sc_security.d \
    build/tests/bench/benchlib.d)

# uabench: the OPC UA load generator (any server; SecurityPolicy None or
# --security POLICY:MODE); always -O2 and the plain libproto.a, never
# sanitized.
UABENCH := build/bench/uabench
UABENCH_SRCS := tests/bench/uabench.c tests/bench/uabench_conn.c \
                tests/bench/uabench_sec.c tests/bench/uabench_scen.c
UABENCH_OBJS := $(call objs,build,$(UABENCH_SRCS))

$(UABENCH): $(UABENCH_OBJS) build/libproto.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(WOLFSSL_LIBS) -lm

# The server matrix (read1, read100, browse, write100, sub, fanout, and
# read1-sec, connect, connect-sec: read1 and the handshake over
# Basic256Sha256 SignAndEncrypt with the RSA ceiling;
# tests/bench/bench_server.sh) against build/uabroker; the table goes into
# docs/benchmarks.md between the bench-server markers.  BENCH_SECONDS
# (default 10) per run,
# BENCH_WORKERS (default 0 = one per core), BENCH_SERVER_ARGS (--no-doc:
# print only).
.PHONY: bench
bench: $(UABENCH) build/uabroker build/uaworker build/uahistorian
	BENCH_SECONDS=$(or $(BENCH_SECONDS),10) \
	BENCH_WORKERS=$(or $(BENCH_WORKERS),0) \
	  sh tests/bench/bench_server.sh $(BENCH_SERVER_ARGS)

# Instructions per WriteValue of write100 in the broker and the worker,
# under callgrind (tests/bench/instr_write.sh; needs valgrind): the
# figure of the Write path that does not move with the host.
.PHONY: bench-instr
bench-instr: $(UABENCH) build/uabroker build/uaworker build/uahistorian
	sh tests/bench/instr_write.sh

# The broker's instructions per value change with history off and on,
# with and without a subscriber on the same variables
# (tests/bench/instr_hist.sh; needs valgrind).
.PHONY: bench-instr-hist
bench-instr-hist: $(UABENCH) build/uabroker build/uaworker build/uahistorian
	sh tests/bench/instr_hist.sh

# Two builds through the server matrix, alternating, in one run
# (tests/bench/bench_ab.sh): make bench-ab A=old/uabroker B=build/uabroker
# [ROUNDS=2] [BENCH_SECONDS=10].
.PHONY: bench-ab
bench-ab: $(UABENCH) build/uabroker build/uaworker build/uahistorian
	BENCH_SECONDS=$(or $(BENCH_SECONDS),10) \
	BENCH_WORKERS=$(or $(BENCH_WORKERS),0) \
	  sh tests/bench/bench_ab.sh $(A) $(or $(B),build/uabroker) \
	     $(or $(ROUNDS),2)

-include $(wildcard $(patsubst %.o,%.d,$(UABENCH_OBJS)))

# ---------------------------------------------------------------- clean

.PHONY: clean
clean:
	rm -rf build

# Header dependencies of every object that can exist.
-include $(wildcard $(patsubst %.o,%.d, \
    $(call objs,build,$(PROTO_SRCS) $(SHM_SRCS) $(HIST_SRCS) $(BROKER_SRCS) \
                      $(WORKER_SRCS) $(UNIT_SRCS) tests/bench/bench_codec.c \
                      tests/bench/bench_addrspace.c) \
    $(call objs,build/san,$(PROTO_SRCS) $(SHM_SRCS) $(HIST_SRCS) \
                          $(BROKER_SRCS) $(WORKER_SRCS) $(UNIT_SRCS)) \
    $(FUZZ_PROTO_OBJS) $(patsubst %.c,build/fuzz/obj/%.o,$(FUZZ_SRCS)) \
    $(call objs,build,$(wildcard tests/integ/*.c tests/lib/*.c)) \
    $(call objs,build/san,$(wildcard tests/integ/*.c tests/lib/*.c))))

endif # phase 1 / phase 2
