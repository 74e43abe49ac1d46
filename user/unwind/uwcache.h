/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * uwcache.h — compiled unwind tables (cfi.h) kept on disk across runs, keyed by the ELF file's
 * build id, so that a runtime's big binary (node: ~370k rows, ~0.2 s to build here) is not
 * compiled again at every cold start.
 *
 * One file per build id, DIR/<hex build id>.uwt: a header (magic, format version, the build id
 * again, the SHA-256 of the bytes the table was built from, the row count, a checksum of the
 * rows) and the rows. The build id alone is no key: the file's author picks it freely
 * (ld --build-id=0x...), so a library could claim another's build id with a lying .eh_frame
 * and cut every later program's stacks that use the real one. So the header also holds
 * pt_cfi_elf_digest() of the file the table came from, and a reader whose file's digest
 * differs rebuilds (counted: mismatched) and overwrites it.
 *
 * peaktrace runs as root and a cache file steers the kernel's unwinder, so nothing in it is
 * trusted: the directory must be owned by root and writable by root alone, and so must each
 * of its parents (one writable by others only with the sticky bit, as /tmp; no symlink in the
 * path), else the cache is off, said once. The directory is opened once, at that check, and
 * every file operation is relative to that descriptor (openat, renameat, unlinkat), so a
 * directory renamed or swapped afterwards is never written into. A file must be a regular
 * root-owned file of exactly the size its header announces, with the right magic, version
 * and build id, a matching checksum and rows that are sorted and of known kinds. Anything
 * else is rejected (counted), removed and rebuilt. The directory is bounded
 * (PT_UWCACHE_MAX_FILES files, PT_UWCACHE_MAX_BYTES in all): the least recently used tables
 * (a read sets a file's mtime) are removed to make room (counted). Files are written to a
 * temporary name and renamed, so a reader never sees half a file.
 */
#ifndef PEAKTRACE_UWCACHE_H
#define PEAKTRACE_UWCACHE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "unwind/cfi.h"
#include "util/sha256.h"

#define PT_UWCACHE_DEFAULT_DIR "/var/cache/peaktrace/unwind"
#define PT_UWCACHE_MAX_FILES 256
#define PT_UWCACHE_MAX_BYTES (256ull << 20)
#define PT_UWCACHE_BID_MAX 64

struct pt_uwcache_stats {
	uint64_t hits;          /* tables read from the cache */
	uint64_t misses;        /* no usable file for the build id: built (then written) */
	uint64_t rejected;      /* a file failed a check (corrupt, truncated, foreign): rebuilt */
	uint64_t written;       /* tables written */
	uint64_t not_written;   /* not written: a write failed, or no room could be made */
	uint64_t evicted;       /* least recently used tables removed to make room */
	uint64_t no_build_id;   /* files without a build id: built every time */
	uint64_t mismatched;    /* a file for the build id, built from other unwind sections (a
	                         * forged or reused build id): rebuilt and overwritten (also
	                         * among misses) */
	uint64_t uncacheable;   /* tables that read words outside their CFI section
	                         * (pt_cfi_stats.derefs): built every time, never written */
};

struct pt_uwcache {
	bool on;
	int dfd;                /* the directory, held from the check (-1 when off) */
	char dir[4096];
	struct pt_uwcache_stats st;
};

/* dir NULL: PT_UWCACHE_DEFAULT_DIR, created (0700, its missing parents 0755) if missing. off:
 * no cache at all. Returns 0, or -errno when the cache is off because the directory cannot be
 * used (why in *why). */
int pt_uwcache_init(struct pt_uwcache *c, const char *dir, bool off, const char **why);
void pt_uwcache_close(struct pt_uwcache *c);
/* The table for build id bid whose file's CFI digests to src (pt_cfi_elf_digest): 0 with *t
 * filled (the caller frees it with pt_cfi_free), -ENOENT when there is none, -EBADMSG when
 * the file was rejected (and removed), -ESTALE when it was built from other bytes (the caller
 * counts st.mismatched when it rebuilds, as it counts misses; its pt_uwcache_put replaces the
 * file). */
int pt_uwcache_get(struct pt_uwcache *c, const uint8_t *bid, size_t bidlen,
		   const uint8_t src[PT_SHA256_LEN], struct pt_unwind_table *t);
/* Keep t under build id bid and digest src (best effort; counted in st). */
void pt_uwcache_put(struct pt_uwcache *c, const uint8_t *bid, size_t bidlen,
		    const uint8_t src[PT_SHA256_LEN], const struct pt_unwind_table *t);

/* The parents rule of pt_uwcache_init for one path component, pure (unit tested): 0, or why
 * not. uid/mode: the component's fstat; last: the cache directory itself; euid: peaktrace's. */
const char *pt_uwcache_dir_refusal(uint32_t uid, uint32_t mode, bool last, uint32_t euid);
#endif
