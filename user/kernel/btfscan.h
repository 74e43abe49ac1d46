/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * btfscan.h — the few questions the kernel check asks of the kernel's BTF (is there a function,
 * a typedef, a struct member of this name), answered from the raw BTF in two passes.
 *
 * Why not libbpf's btf__load_vmlinux_btf(): it parses and checks every type (~50 ms here for
 * 125,000 types), and the BPF load parses the same file again moments later; the check runs
 * before every start, where launch mode holds the command. Mapped (6.16+: MAP_PRIVATE) the
 * file costs no copy; read, ~20 ms here. tests/unit/test_kfeatures.c compares the answers
 * with libbpf's on this machine's BTF.
 */
#ifndef PEAKTRACE_BTFSCAN_H
#define PEAKTRACE_BTFSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kernel's BTF as one blob. Zero-initialized is closed. */
struct pt_btf {
	const uint8_t *data;
	size_t len;
	int owned;               /* what pt_btf_close does with data: PT_BTF_* */
	const uint8_t *types;    /* the type section */
	uint32_t types_len;
	const char *strs;        /* the string section */
	uint32_t strs_len;
	uint32_t *off;           /* off[id]: type id's offset in types, for ids 1..ntypes */
	uint32_t ntypes;
};

enum { PT_BTF_CALLERS = 0, PT_BTF_MAPPED, PT_BTF_READ };

/* One name looked for by pt_btf_find: id 0 when there is none of that name and kind. */
struct pt_btf_query {
	const char *name;
	int kind;                /* BTF_KIND_* */
	uint32_t id;
};

/* Index a raw BTF blob (its bytes stay the caller's; nothing is copied). 0, -EINVAL (not BTF,
 * or its sections run past len), -ENOTSUP (another byte order, or a kind newer than this code
 * knows: how long its record is cannot be told), -ENOMEM. */
int pt_btf_index(struct pt_btf *b, const void *data, size_t len);
/* /sys/kernel/btf/vmlinux, mapped or read, indexed. 0 or -errno (-ENOENT: no BTF). */
int pt_btf_open_vmlinux(struct pt_btf *b);
/* Free the index, and the blob when pt_btf_open_vmlinux got it; b is closed afterwards. */
void pt_btf_close(struct pt_btf *b);

/* Fill each query's id in one pass over the types (the first of that name and kind). */
void pt_btf_find(const struct pt_btf *b, struct pt_btf_query *q, int n);
/* A type's kind (BTF_KIND_*), -1 for an id out of range. */
int pt_btf_kind(const struct pt_btf *b, uint32_t id);
/* id with typedefs, const, volatile, restrict and type tags taken off (0 on a loop or bad id). */
uint32_t pt_btf_resolve(const struct pt_btf *b, uint32_t id);
/* The type id of a struct's or union's member of that name, resolved (pt_btf_resolve);
 * members of anonymous struct and union members are searched too, as C names them. 0: none. */
uint32_t pt_btf_member(const struct pt_btf *b, uint32_t sid, const char *name);

#endif
