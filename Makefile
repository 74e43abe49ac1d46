# peaktrace — kernel-style Makefile: every artifact under $(OUT), quiet unless V=1.
# Chain: bpf/%.bpf.c -> $(OUT)/%.bpf.o -> $(OUT)/%.skel.h -> user objects -> $(OUT)/peaktrace
HOST_ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
ARCH      ?= $(HOST_ARCH)
# Another architecture than the host's is a cross build, in its own output folder:
# make static ARCH=arm64 -> build-arm64/peaktrace-static (Debian's gcc-aarch64-linux-gnu and the
# multiarch :arm64 -dev packages, make deps-arm64). The BPF objects are the same either way
# except for bpf/arch/ and vmlinux/$(ARCH)/.
ifeq ($(ARCH),$(HOST_ARCH))
OUT       ?= build
else
OUT       ?= build-$(ARCH)
CROSS_COMPILE_arm64 := aarch64-linux-gnu-
CROSS_COMPILE ?= $(CROSS_COMPILE_$(ARCH))
ifeq ($(origin CC),default)
CC        := $(CROSS_COMPILE)gcc
endif
endif
CLANG     ?= clang
BPFTOOL   ?= bpftool
CC        ?= cc
VMLINUX   := vmlinux/$(ARCH)/vmlinux.h
# arm64's vmlinux.h comes from a 7.x kernel, whose BTF has anonymous members of named struct
# types (the kernel builds with -fms-extensions since 6.19); bpftool writes them as such.
BPF_ARCH_CFLAGS_arm64 := -fms-extensions -Wno-microsoft-anon-tag
CFLAGS    ?= -O2 -g -Wall -Wextra -Wno-unused-parameter
# User code names the folder of every header it includes: "util/fmt.h", "bpf/peaktrace.h".
USER_CFLAGS := $(CFLAGS) -Werror=implicit-function-declaration -I$(OUT) -iquote user -iquote . -D_GNU_SOURCE
LDLIBS    := -lbpf -ldw -lelf -lz -lstdc++ -lm -lpthread
BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_$(ARCH) -I$(dir $(VMLINUX)) -Ibpf -Wall -Wno-unused-function \
	$(BPF_ARCH_CFLAGS_$(ARCH))

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

BPF_SRCS  := $(wildcard bpf/*.bpf.c)
SKELS     := $(patsubst bpf/%.bpf.c,$(OUT)/%.skel.h,$(BPF_SRCS))
USER_SRCS := $(filter-out user/main.c,$(wildcard user/*.c user/*/*.c))
USER_OBJS := $(patsubst user/%.c,$(OUT)/user/%.o,$(USER_SRCS))
# report.html's JS and CSS, compiled in (tools/embed-assets.py): the binary never reads them.
HTML_ASSETS := user/report/html/report.js user/report/html/report.css
USER_OBJS += $(OUT)/html-assets.o
# Each BPF program's stack bytes (tools/check-stack.py), for --verifier-stats.
USER_OBJS += $(OUT)/stackchains.o
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/unit/%,$(UNIT_SRCS))
HDRS      := $(wildcard bpf/*.h bpf/arch/*.h user/*.h user/*/*.h)

.DELETE_ON_ERROR:
# Keep the BPF object and skeleton: they are inputs of several rules, not throwaways.
.SECONDARY:
.PHONY: all clean deps test unit demo bench vmlinux check-deps readme-help check browser-deps

all: $(OUT)/peaktrace

$(OUT) $(OUT)/user $(OUT)/tests/unit:
	$(Q)mkdir -p $@

$(OUT)/%.bpf.o: bpf/%.bpf.c $(HDRS) $(VMLINUX) | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(OUT)/user/%.o: user/%.c $(HDRS) $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@

$(OUT)/html-assets.c: $(HTML_ASSETS) tools/embed-assets.py | $(OUT)
	$(call msg,EMBED,$@)
	$(Q)python3 tools/embed-assets.py $@ pt_html_js=user/report/html/report.js pt_html_css=user/report/html/report.css

$(OUT)/stackchains.c: $(OUT)/peaktrace.bpf.o tools/check-stack.py
	$(call msg,STACK,$@)
	$(Q)python3 tools/check-stack.py --c-table $@ $< >/dev/null

$(OUT)/stackchains.o: $(OUT)/stackchains.c user/bpfload.h $(SKELS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -iquote user -c $< -o $@

$(OUT)/html-assets.o: $(OUT)/html-assets.c
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUT)/peaktrace: $(OUT)/user/main.o $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@

# make static: build/peaktrace-static, the same objects linked statically (glibc, libbpf.a,
# libdw.a, libelf.a and the compressors libdw reads sections with), for a function container of
# any userland: no interpreter, no NEEDED. glibc's static libc keeps dlopen only for iconv's gconv
# modules, which a program that never calls setlocale() never reaches.
STATIC_LDLIBS := -lbpf -ldw -lelf -lz -lzstd -llzma -lbz2 -lstdc++ -lm -lpthread
.PHONY: static rootfs
static: $(OUT)/peaktrace-static

$(OUT)/peaktrace-static: $(OUT)/user/main.o $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) -static $(CFLAGS) $^ $(STATIC_LDLIBS) -o $@

# make rootfs: a Debian trixie root filesystem (minbase + python3) under $(OUT)/rootfs/trixie,
# made once with debootstrap (its stamp: .peaktrace-rootfs-complete); the container tests use it.
rootfs:
	$(Q)tools/rootfs.sh $(OUT)/rootfs/trixie

# Unit tests: each tests/unit/test_*.c links against every user/ object except main.
$(OUT)/tests/unit/%: tests/unit/%.c $(USER_OBJS) $(wildcard tests/unit/*.h) | $(OUT)/tests/unit
	$(call msg,CC,$@)
	$(Q)$(CC) $(USER_CFLAGS) -iquote tests/unit $< $(USER_OBJS) $(LDLIBS) -o $@

unit: $(UNIT_BINS)

# Install build and test dependencies from Debian (idempotent).
DEPS := clang llvm libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev make gcc g++ python3 pkg-config \
	libclang-rt-14-dev
# make static (libzstd.a, liblzma.a, libbz2.a for libdw.a) and make rootfs.
EXTRA_DEPS += libzstd-dev liblzma-dev libbz2-dev debootstrap
# The allocators tests (tests/run.py): jemalloc, tcmalloc and mimalloc to LD_PRELOAD, musl-gcc.
EXTRA_DEPS += libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 musl-tools
# A package also installed for arm64 (make deps-arm64: libbpf-dev:arm64 ...) is ambiguous to a
# bare `dpkg -s NAME`: asked again for this machine's architecture.
deps:
	@a=$$(dpkg --print-architecture); missing=""; for p in $(DEPS) $(EXTRA_DEPS); do \
	  dpkg -s $$p >/dev/null 2>&1 || dpkg -s $$p:$$a >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	else echo "deps: all installed"; fi

test: deps all unit lambda-host browser-deps static fuzz-build
	$(Q)python3 tests/run.py --build $(OUT)

# The browser section's tooling (tests/browser/: playwright-core driving Debian's chromium), when
# npm is there and it is not installed yet; without it that section says "skipped" and why.
browser-deps:
	@dpkg -s chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } || true
	@[ -d tests/browser/node_modules/playwright-core ] || ! command -v npm >/dev/null || \
	  (cd tests/browser && npm ci --no-audit --no-fund >/dev/null) || echo "browser-deps: npm ci failed; the browser tests are skipped"

# The source layout's rules: layers, includes naming their folder, no include cycle; and every
# BPF program's deepest call chain within 448 of the 512 stack bytes the verifier allows a whole
# chain where the JIT has no private stack (tools/check-stack.py; both also a section of make test).
check: $(patsubst bpf/%.bpf.c,$(OUT)/%.bpf.o,$(BPF_SRCS))
	$(Q)python3 tools/check-layout.py
	$(Q)python3 tools/check-stack.py $^

demo: deps all lambda-host
	$(Q)tools/demo.sh $(OUT)

bench: deps all lambda-host
	$(Q)tools/bench/bench.sh $(OUT)
	$(Q)python3 tools/bench/scale.py $(OUT)
	$(Q)python3 tools/bench/pyobjects.py $(OUT)
	$(Q)$(MAKE) --no-print-directory bench-coldstart

# What launch mode adds to a Lambda runtime's cold start (tools/bench/coldstart.py).
.PHONY: bench-coldstart
bench-coldstart: all lambda-host
	$(Q)python3 tools/bench/coldstart.py $(OUT)

# The cost of RSS attribution per anonymous page fault (tools/bench/faults.sh).
.PHONY: bench-faults
bench-faults: all
	$(Q)tools/bench/faults.sh $(OUT)

# Refresh docs/usage.md's copy of `peaktrace --help` (tests/sections/docs.py checks they agree;
# the name stays from when the README held it).
HELP_DOC := docs/usage.md
readme-help: all
	$(Q)python3 -c 'import re,subprocess,sys; h=subprocess.run(["$(OUT)/peaktrace","--help"],capture_output=True,text=True).stdout.rstrip(); r=open("$(HELP_DOC)").read(); r=re.sub(r"<!-- help:begin -->\n```\n.*?\n```\n<!-- help:end -->", lambda m: "<!-- help:begin -->\n```\n"+h+"\n```\n<!-- help:end -->", r, flags=re.S); open("$(HELP_DOC)","w").write(r)'

# Regenerate the checked-in vmlinux.h from the running kernel's BTF.
vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX)

# Regenerate vmlinux/arm64/vmlinux.h on any host, without booting: Debian's newest arm64 kernel
# (tools/vm/kernel.sh, cached in build/vm/kernel-arm64-newest), its BTF cut out of the boot Image
# (tools/vm/image-btf.py), dumped by bpftool. Made from 7.3.4+deb13-arm64 (7.3.4-1~bpo13+1):
# 6.12's BTF lacks types the programs name (trace_event_raw_sched_process_exit); CO-RE
# relocates to older kernels at load time as on x86.
.PHONY: vmlinux-arm64
vmlinux-arm64:
	$(Q)VM_ARCH=arm64 tools/vm/kernel.sh newest build/vm/kernel-arm64-newest >/dev/null
	$(Q)python3 tools/vm/image-btf.py build/vm/kernel-arm64-newest/vmlinuz build/vm/arm64-vmlinux.btf
	$(Q)$(BPFTOOL) btf dump file build/vm/arm64-vmlinux.btf format c > vmlinux/arm64/vmlinux.h

# make check-arm64: make static ARCH=arm64, then the binary checked under qemu-user on this host
# (tools/check-arm64.sh: a static AArch64 executable; --version, --help; a tracing run, which
# finds no bpf() under qemu-user, stopped in one line, exit 7). CI runs it.
.PHONY: check-arm64
check-arm64: deps-arm64
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 static
	$(Q)tools/check-arm64.sh build-arm64/peaktrace-static

# The cross build's dependencies: Debian's cross compiler and the :arm64 libraries the static link
# takes (dpkg --add-architecture arm64), and qemu-user-static to run --help under emulation;
# libmicrohttpd-dev:arm64 for the Lambda-like host the arm64 VM runs (make vmtest ARCH=arm64).
ARM64_DEPS := gcc-aarch64-linux-gnu g++-aarch64-linux-gnu libbpf-dev:arm64 libelf-dev:arm64 \
	libdw-dev:arm64 zlib1g-dev:arm64 libzstd-dev:arm64 liblzma-dev:arm64 libbz2-dev:arm64 \
	qemu-user-static libmicrohttpd-dev:arm64
.PHONY: deps-arm64
deps-arm64:
	@missing=""; for p in $(ARM64_DEPS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; \
	  dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	else echo "deps-arm64: all installed"; fi

clean:
	rm -rf $(OUT)

# The Lambda-like host and the bundled sample functions: their own rules.
include tools/lambda-host/host.mk

# libFuzzer harnesses for the parsers of target-controlled input: make fuzz [FUZZ_SECONDS=N].
include tests/fuzz/fuzz.mk

# Debian kernels under qemu: make vmtest KERNEL=VERSION, make vmtest-all (tools/vm/README.md).
include tools/vm/vm.mk
