# Kernel VMs (tools/vm/README.md): a Debian kernel under qemu-system-x86_64 (TCG), the host's
# root file system shared read-only over 9p as the guest's, a smoke set of the tests run in it.
#   make vmtest KERNEL=6.1      one kernel (5.10, 6.1, 6.12, newest; default newest)
#   make vmtest-all             5.10, 6.1, 6.12 and newest one after the other, then a table
#   make vm-deps                qemu-system-x86, busybox-static, kmod, xz-utils (apt)
# Kernels are cached under build/vm/kernel-VERSION/ (a second run downloads nothing).
# ARCH=arm64 (make vmtest ARCH=arm64 KERNEL=6.12, make vmtest-all ARCH=arm64): Debian's arm64
# kernels under qemu-system-aarch64, a bookworm arm64 guest root made on this host (cached in
# build/vm/rootfs-arm64/), make static ARCH=arm64's binary and the workloads and Lambda-like host
# cross-built into build-arm64/; kernels cached under build/vm/kernel-arm64-VERSION/.
# VM_SUITE=trixie (ARCH=arm64 only): the guest root is Debian trixie's (glibc 2.41 and python3.13,
# built with pointer authentication and BTI), cached in build/vm/rootfs-arm64-trixie/; the same
# cross-built binaries run in it.
KERNEL      ?= newest
VM_KERNELS  ?= 5.10 6.1 6.12 newest
# Below peaktrace's floor (bpf_loop, 5.17): the test there is a clean refusal (one line, exit 7).
VM_REFUSED  ?= 5.10
VM_APT_PKGS := qemu-system-x86 busybox-static kmod xz-utils
VM_ENV      :=
VM_SUITE    ?= bookworm
ifeq ($(ARCH),arm64)
# 5.10 is left out on arm64: its refusal is the same code as on x86-64, and a boot costs ~20 s.
# 6.1 is arm64's refused kernel: page faults are traced with fentry on handle_mm_fault, 6.4+
# there (unless VM_REFUSED is given).
VM_KERNELS  := $(filter-out 5.10,$(VM_KERNELS))
ifeq ($(origin VM_REFUSED),file)
VM_REFUSED  := 6.1
endif
VM_APT_PKGS := qemu-system-arm busybox-static kmod xz-utils debootstrap
VM_ENV      := VMTEST_ARCH=arm64 VMTEST_SUITE=$(VM_SUITE)
else ifneq ($(VM_SUITE),bookworm)
$(error VM_SUITE=$(VM_SUITE): ARCH=arm64 only (the x86 guest runs this host's root))
endif

.PHONY: vm-deps vmtest vmtest-all vm-prebuild

vm-deps:
	$(Q)missing=""; for p in $(VM_APT_PKGS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed$$' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "vm-deps: installing$$missing"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; }; \
	fi

# The workloads the tests build, built here so that the guest finds them up to date.
ifeq ($(ARCH),arm64)
# The static binary only (the guest's root has none of libbpf, libdw, ...), the Lambda-like host
# and the workloads cross-built against bookworm's arm64 glibc, the guest root's.
vm-prebuild: deps-arm64
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 static lambda-host
	$(Q)python3 tools/vm/prebuild.py --cross $(CROSS_COMPILE) $(OUT)
else
vm-prebuild: all lambda-host
	$(Q)python3 tools/vm/prebuild.py $(OUT)
endif

vmtest: vm-deps vm-prebuild
	$(Q)$(VM_ENV) OUT=$(OUT) VM_REFUSED="$(VM_REFUSED)" tools/vm/smoke.sh $(KERNEL)

vmtest-all: vm-deps vm-prebuild
	$(Q)$(VM_ENV) OUT=$(OUT) VM_REFUSED="$(VM_REFUSED)" tools/vm/smoke-all.sh $(VM_KERNELS)
