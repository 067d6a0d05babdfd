# spantrace/build.mk - the libbpf CO-RE capture helper (optional): built only where
# clang, bpftool, libbpf and kernel BTF exist; otherwise `make` says why.
BPFTOOL ?= $(shell command -v bpftool 2>/dev/null || ls /usr/sbin/bpftool 2>/dev/null)
BPF_ARCH := $(patsubst x86_64,x86,$(patsubst aarch64,arm64,$(shell uname -m)))
# Debian's multiarch include folder (asm/ headers): clang -dumpmachine says
# x86_64-pc-linux-gnu, not x86_64-linux-gnu, so ask gcc first
BPF_MULTIARCH := $(or $(shell gcc -print-multiarch 2>/dev/null),$(shell $(CC) -dumpmachine))
SPANTRACE_MISSING := $(if $(shell command -v clang 2>/dev/null),,clang) \
    $(if $(BPFTOOL),,bpftool) $(if $(wildcard /sys/kernel/btf/vmlinux),,kernel-BTF) \
    $(if $(shell $(PKG_CONFIG) --exists libbpf && echo y),,libbpf-dev)
ifeq ($(strip $(SPANTRACE_MISSING)),)
ST := $(B)/spantrace
OPTIONAL += $(BIN)/spantrace
OPTIONAL_TESTS += spantrace
$(ST)/vmlinux.h:
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@
$(ST)/spantrace.bpf.o: spantrace/spantrace.bpf.c spantrace/spantrace.h $(ST)/vmlinux.h
	clang -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -I$(ST) -Ispantrace \
	    -I/usr/include/$(BPF_MULTIARCH) -c $< -o $@
$(ST)/spantrace.skel.h: $(ST)/spantrace.bpf.o
	$(BPFTOOL) gen skeleton $< name spantrace_bpf > $@
$(ST)/spantrace.o: spantrace/spantrace.c spantrace/spantrace.h $(ST)/spantrace.skel.h
	$(CC) $(CPPFLAGS) -I$(ST) -Ispantrace $(WARN) $(CFLAGS) -c $< -o $@
$(ST)/sym.o: spantrace/sym.c spantrace/sym.h
	$(CC) $(CPPFLAGS) -Ispantrace $(WARN) $(CFLAGS) -c $< -o $@
# libelf and libiberty: --offcpu names its stacks' addresses (sym.c)
$(BIN)/spantrace: $(ST)/spantrace.o $(ST)/sym.o $(LIBA)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ $(call pc,libbpf) $(call pc,libelf) -liberty $(LIB_LIBS) -o $@
else
OPTIONAL += spantrace-skipped
spantrace-skipped:
	@echo "spantrace: skipped: missing $(strip $(SPANTRACE_MISSING))"
.PHONY: spantrace-skipped
endif
