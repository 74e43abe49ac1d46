/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sha256.h — SHA-256 (FIPS 180-4), for keys an attacker must not be able to collide: the unwind
 * cache's key covers the bytes a table was built from (unwind/uwcache.h), and a target controls
 * those bytes, so a fast non-cryptographic hash (FNV, CRC) would let it forge a match. Nothing
 * peaktrace links (libbpf, libelf, libdw, zlib) offers one, hence this small implementation;
 * tests/unit/test_sha256.c checks it against the FIPS 180-2 examples.
 */
#ifndef PEAKTRACE_SHA256_H
#define PEAKTRACE_SHA256_H
#include <stddef.h>
#include <stdint.h>

#define PT_SHA256_LEN 32

struct pt_sha256 {
	uint32_t h[8];
	uint64_t len;           /* bytes hashed so far */
	uint8_t buf[64];        /* a partial block */
	size_t nbuf;
};

void pt_sha256_init(struct pt_sha256 *c);
void pt_sha256_update(struct pt_sha256 *c, const void *data, size_t n);
void pt_sha256_final(struct pt_sha256 *c, uint8_t out[PT_SHA256_LEN]);
/* One call: the digest of data[0, n). */
void pt_sha256(const void *data, size_t n, uint8_t out[PT_SHA256_LEN]);
#endif
