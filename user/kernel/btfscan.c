// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * btfscan.c — the raw BTF format (include/uapi/linux/btf.h), read just enough: a header, a type
 * section of records (struct btf_type, then a tail whose length the kind and vlen give) and a
 * string section. Ids number the records from 1 in file order.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/btf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/file.h"
#include "kernel/btfscan.h"

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"
/* Far above any kernel's (6.18: 5.2 MiB); a bound for the read. */
#define BTF_MAX (256u << 20)
/* BTF_KIND_ENUM64 (6.0), the last kind any kernel emits so far; older uapi headers lack it. */
#define KIND_ENUM64 19

/* The bytes after a record's struct btf_type, or -1 for a kind this code does not know. */
static long tail_len(uint32_t info)
{
	uint32_t vlen = BTF_INFO_VLEN(info);

	switch (BTF_INFO_KIND(info)) {
	case BTF_KIND_INT:
		return 4;
	case BTF_KIND_ARRAY:
		return sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * sizeof(struct btf_param);
	case BTF_KIND_VAR:
		return sizeof(struct btf_var);
	case BTF_KIND_DATASEC:
		return (long)vlen * sizeof(struct btf_var_secinfo);
	case BTF_KIND_DECL_TAG:
		return 4;
	case KIND_ENUM64:
		return (long)vlen * 12;   /* struct btf_enum64: name_off, val_lo32, val_hi32 */
	case BTF_KIND_UNKN:
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	}
	return -1;
}

int pt_btf_index(struct pt_btf *b, const void *data, size_t len)
{
	const struct btf_header *h = data;
	uint32_t cap = 0, pos = 0;

	memset(b, 0, sizeof(*b));
	if (len < sizeof(*h) || h->magic != BTF_MAGIC)
		return len >= 2 && h->magic == 0x9FEB ? -ENOTSUP : -EINVAL;
	if (h->hdr_len < sizeof(*h) || h->hdr_len > len ||
	    (uint64_t)h->type_off + h->type_len > len - h->hdr_len ||
	    (uint64_t)h->str_off + h->str_len > len - h->hdr_len || !h->str_len)
		return -EINVAL;
	b->data = data;
	b->len = len;
	b->types = (const uint8_t *)data + h->hdr_len + h->type_off;
	b->types_len = h->type_len;
	b->strs = (const char *)data + h->hdr_len + h->str_off;
	b->strs_len = h->str_len;
	if (b->strs[b->strs_len - 1])
		return -EINVAL;           /* every name must end inside the section */
	while (pos < b->types_len) {
		const struct btf_type *t = (const void *)(b->types + pos);
		long tail;

		if (b->types_len - pos < sizeof(*t))
			goto bad;
		tail = tail_len(t->info);
		if (tail < 0) {
			pt_btf_close(b);
			return -ENOTSUP;
		}
		if (b->ntypes + 2 > cap) {
			uint32_t *n = realloc(b->off, (cap = cap ? cap * 2 : 65536) * sizeof(*n));

			if (!n) {
				pt_btf_close(b);
				return -ENOMEM;
			}
			b->off = n;
		}
		b->off[++b->ntypes] = pos;
		if ((uint64_t)pos + sizeof(*t) + (uint64_t)tail > b->types_len)
			goto bad;
		pos += sizeof(*t) + (uint32_t)tail;
	}
	return 0;
bad:
	pt_btf_close(b);
	return -EINVAL;
}

int pt_btf_open_vmlinux(struct pt_btf *b)
{
	struct stat st;
	void *p = MAP_FAILED;
	size_t len = 0;
	int fd, err;

	memset(b, 0, sizeof(*b));
	fd = open(VMLINUX_BTF, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* sysfs says the file's true size; older kernels refuse the mapping (EINVAL, EACCES). */
	if (!fstat(fd, &st) && st.st_size > 0 && (uint64_t)st.st_size < BTF_MAX) {
		len = (size_t)st.st_size;
		p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	}
	close(fd);
	if (p == MAP_FAILED) {
		p = pt_read_file(VMLINUX_BTF, BTF_MAX, &len);
		if (!p)
			return -errno;
		err = pt_btf_index(b, p, len);
		if (err)
			free(p);
		else
			b->owned = PT_BTF_READ;
		return err;
	}
	err = pt_btf_index(b, p, len);
	if (err)
		munmap(p, len);
	else
		b->owned = PT_BTF_MAPPED;
	return err;
}

void pt_btf_close(struct pt_btf *b)
{
	if (b->owned == PT_BTF_MAPPED)
		munmap((void *)b->data, b->len);
	else if (b->owned == PT_BTF_READ)
		free((void *)b->data);
	free(b->off);
	memset(b, 0, sizeof(*b));
}

static const struct btf_type *type_at(const struct pt_btf *b, uint32_t id)
{
	return id && id <= b->ntypes ? (const void *)(b->types + b->off[id]) : NULL;
}

static const char *name_of(const struct pt_btf *b, uint32_t off)
{
	return off < b->strs_len ? b->strs + off : "";
}

void pt_btf_find(const struct pt_btf *b, struct pt_btf_query *q, int n)
{
	int i, left = 0;

	for (i = 0; i < n; i++) {
		q[i].id = 0;
		left++;
	}
	for (uint32_t id = 1; id <= b->ntypes && left; id++) {
		const struct btf_type *t = type_at(b, id);
		int kind = BTF_INFO_KIND(t->info);

		if (!t->name_off)
			continue;
		for (i = 0; i < n; i++) {
			if (q[i].id || q[i].kind != kind || strcmp(name_of(b, t->name_off), q[i].name))
				continue;
			q[i].id = id;
			left--;
		}
	}
}

int pt_btf_kind(const struct pt_btf *b, uint32_t id)
{
	const struct btf_type *t = type_at(b, id);

	return t ? (int)BTF_INFO_KIND(t->info) : -1;
}

uint32_t pt_btf_resolve(const struct pt_btf *b, uint32_t id)
{
	/* A chain of modifiers is short; a longer one is a loop in a broken file. */
	for (int hops = 0; hops < 32; hops++) {
		const struct btf_type *t = type_at(b, id);

		if (!t)
			return 0;
		switch (BTF_INFO_KIND(t->info)) {
		case BTF_KIND_TYPEDEF:
		case BTF_KIND_VOLATILE:
		case BTF_KIND_CONST:
		case BTF_KIND_RESTRICT:
		case BTF_KIND_TYPE_TAG:
			id = t->type;
			continue;
		default:
			return id;
		}
	}
	return 0;
}

static uint32_t member_in(const struct pt_btf *b, uint32_t sid, const char *name, int depth)
{
	const struct btf_type *t = type_at(b, sid);
	const struct btf_member *m;
	uint32_t i, vlen, found;

	if (!t || depth > 8 ||
	    (BTF_INFO_KIND(t->info) != BTF_KIND_STRUCT && BTF_INFO_KIND(t->info) != BTF_KIND_UNION))
		return 0;
	m = (const void *)(t + 1);
	vlen = BTF_INFO_VLEN(t->info);
	for (i = 0; i < vlen; i++) {
		if (m[i].name_off && !strcmp(name_of(b, m[i].name_off), name))
			return pt_btf_resolve(b, m[i].type);
		/* struct mm_struct { struct { ... mm_lock_seq ... }; ... }: C reaches it directly. */
		if (!m[i].name_off && (found = member_in(b, pt_btf_resolve(b, m[i].type), name, depth + 1)))
			return found;
	}
	return 0;
}

uint32_t pt_btf_member(const struct pt_btf *b, uint32_t sid, const char *name)
{
	return member_in(b, pt_btf_resolve(b, sid), name, 0);
}
