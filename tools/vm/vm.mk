# Kernel VMs (tools/vm/README.md): a Debian kernel under qemu-system-x86_64 (TCG), the host's
# root file system shared read-only over 9p as the guest's, a smoke set of the tests run in it.
#   make vmtest KERNEL=6.1      one kernel (5.10, 6.1, 6.12, newest; default newest)
#   make vmtest-all             5.10, 6.1, 6.12 and newest one after the other, then a table
#   make vm-deps                qemu-system-x86, busybox-static, kmod, xz-utils (apt)
# Kernels are cached under build/vm/kernel-VERSION/ (a second run downloads nothing).
KERNEL      ?= newest
VM_KERNELS  ?= 5.10 6.1 6.12 newest
# Below peaktrace's floor (bpf_loop, 5.17): the test there is a clean refusal (one line, exit 7).
VM_REFUSED  ?= 5.10
VM_APT_PKGS := qemu-system-x86 busybox-static kmod xz-utils

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
vm-prebuild: all lambda-host
	$(Q)python3 tools/vm/prebuild.py $(OUT)

vmtest: vm-deps vm-prebuild
	$(Q)OUT=$(OUT) VM_REFUSED="$(VM_REFUSED)" tools/vm/smoke.sh $(KERNEL)

vmtest-all: vm-deps vm-prebuild
	$(Q)OUT=$(OUT) VM_REFUSED="$(VM_REFUSED)" tools/vm/smoke-all.sh $(VM_KERNELS)
