# tests/fuzz/fuzz.mk — included by the top Makefile (its OUT, Q and msg).
# libFuzzer harnesses for every parser of input the traced target controls (tests/fuzz/README.md):
#   make fuzz                      build $(OUT)/fuzz/fuzz_* and run each for FUZZ_SECONDS (60)
#   make fuzz FUZZ_SECONDS=10      the same, briefly (CI: a harness that stops building is noticed)
#   make fuzz-build                build only;  make fuzz-cfi   build and run one harness
# Each harness compiles the user/ sources it needs itself, with the sanitizers: never the normal
# build's objects. Runs are one process each, one after another (no -jobs/-workers): the machine is
# shared. New inputs go to $(OUT)/fuzz/corpus/NAME (the checked-in seeds in tests/fuzz/corpus/NAME
# are only read), crashes to $(OUT)/fuzz/NAME-crash-..., the whole log to $(OUT)/fuzz/NAME.log.
# Needs clang and libFuzzer's runtime (libclang-rt-14-dev on Debian 12: in the Makefile's DEPS).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_OPTS    ?=
FUZZ_DIR     := tests/fuzz
FUZZ_CFLAGS  := -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
		-fno-sanitize-recover=all -Wall -Wno-unused-parameter -D_GNU_SOURCE \
		-iquote user -iquote . -iquote $(FUZZ_DIR)
FUZZ_NAMES   := cfi elf maps smaps proc perfmap python rapi host runtime

# What each harness compiles with it, and links.
FUZZ_SRCS_cfi     := user/unwind/cfi.c user/util/elfutil.c user/util/sha256.c
FUZZ_LIBS_cfi     := -lelf
FUZZ_SRCS_elf     := user/util/elfutil.c user/unwind/cfi.c user/util/sha256.c user/target/procmaps.c user/target/proc.c \
		     user/util/file.c user/util/fmt.c user/python/python.c
FUZZ_LIBS_elf     := -lelf
FUZZ_SRCS_maps    := user/target/procmaps.c user/target/proc.c user/util/elfutil.c user/util/file.c
FUZZ_LIBS_maps    := -lelf
FUZZ_SRCS_smaps   := user/arenas/arenas.c user/arenas/resident.c user/util/fmt.c user/target/proc.c user/util/file.c
FUZZ_LIBS_smaps   := -lbpf
FUZZ_SRCS_proc    := user/target/proc.c user/util/file.c
FUZZ_LIBS_proc    :=
FUZZ_SRCS_perfmap := user/symbolize/perfmap.c user/symbolize/symbolize.c user/symbolize/jitmap.c \
		     user/target/procmaps.c user/target/proc.c user/util/elfutil.c user/util/file.c user/util/stop.c \
		     user/util/fmt.c
FUZZ_LIBS_perfmap := -ldw -lelf -lstdc++
FUZZ_SRCS_python  := user/python/python.c user/target/procmaps.c user/target/proc.c \
		     user/util/elfutil.c user/util/file.c user/util/fmt.c
FUZZ_LIBS_python  := -lelf
FUZZ_SRCS_rapi    :=
FUZZ_LIBS_rapi    :=
# server.c and runtime.c are #included by their harnesses (their parsers are static).
FUZZ_SRCS_host    := tools/lambda-host/logfmt.c tools/lambda-host/sandbox.c
FUZZ_LIBS_host    := -pthread
FUZZ_SRCS_runtime :=
FUZZ_LIBS_runtime :=
FUZZ_DEPS_host    := tools/lambda-host/server.c tools/lambda-host/main.c tools/lambda-host/host.h
FUZZ_DEPS_runtime := tools/functions/runtime.c tools/functions/runtime.h

FUZZ_BINS := $(patsubst %,$(OUT)/fuzz/fuzz_%,$(FUZZ_NAMES))

.PHONY: fuzz fuzz-build $(addprefix fuzz-,$(FUZZ_NAMES))

$(OUT)/fuzz:
	$(Q)mkdir -p $@

define FUZZ_RULE
$(OUT)/fuzz/fuzz_$(1): $(FUZZ_DIR)/fuzz_$(1).c $(FUZZ_DIR)/fuzz.h $(FUZZ_SRCS_$(1)) $(FUZZ_DEPS_$(1)) $(HDRS) | $(OUT)/fuzz
	$$(call msg,FUZZ-CC,$$@)
	$$(Q)$$(FUZZ_CC) $$(FUZZ_CFLAGS) $$< $(FUZZ_SRCS_$(1)) $(FUZZ_LIBS_$(1)) -o $$@

# One harness: FUZZ_SECONDS on its seeds; a crash, leak or UB report fails the target.
fuzz-$(1): $(OUT)/fuzz/fuzz_$(1)
	$$(Q)mkdir -p $(OUT)/fuzz/corpus/$(1)
	$$(Q)printf '  %-8s %s (%ss)\n' FUZZ fuzz_$(1) $(FUZZ_SECONDS)
	$$(Q)if $(OUT)/fuzz/fuzz_$(1) -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
		-close_fd_mask=1 -print_final_stats=1 -artifact_prefix=$(OUT)/fuzz/$(1)- $(FUZZ_OPTS) \
		$(OUT)/fuzz/corpus/$(1) $(FUZZ_DIR)/corpus/$(1) >$(OUT)/fuzz/$(1).log 2>&1; then \
		grep -E '^#[0-9]+[[:space:]]+DONE' $(OUT)/fuzz/$(1).log | tail -1 | sed 's/^/           /'; \
	else tail -40 $(OUT)/fuzz/$(1).log; echo "fuzz_$(1) failed: see $(OUT)/fuzz/$(1).log"; exit 1; fi
endef
$(foreach n,$(FUZZ_NAMES),$(eval $(call FUZZ_RULE,$(n))))

fuzz-build: $(FUZZ_BINS)

# Build everything first, then run one harness after another (never two at once, even under -j).
fuzz: fuzz-build
	$(Q)fail=0; for n in $(FUZZ_NAMES); do $(MAKE) --no-print-directory -j1 fuzz-$$n || fail=1; done; \
	exit $$fail
