/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * uwcache.h — compiled unwind tables (cfi.h) kept on disk across runs, keyed by the ELF file's
 * build id, so that a runtime's big binary (node: ~370k rows, ~0.2 s to build here) is not
 * compiled again at every cold start.
 *
 * One file per build id, DIR/<hex build id>.uwt: a header (magic, format version, the build id
 * again, the row count, a checksum of the rows) and the rows. peaktrace runs as root and a cache
 * file steers the kernel's unwinder, so nothing in it is trusted: the directory must be owned
 * by root and writable by root alone (else the cache is off, said once); a file must be a
 * regular root-owned file of exactly the size its header announces, with the right magic,
 * version and build id, a matching checksum and rows that are sorted and of known kinds.
 * Anything else is rejected (counted), removed and rebuilt. The directory is bounded
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
};

struct pt_uwcache {
	bool on;
	char dir[4096];
	struct pt_uwcache_stats st;
};

/* dir NULL: PT_UWCACHE_DEFAULT_DIR, created (0700) if missing. off: no cache at all. Returns 0,
 * or -errno when the cache is off because the directory cannot be used (why in *why). */
int pt_uwcache_init(struct pt_uwcache *c, const char *dir, bool off, const char **why);
/* The table for build id bid: 0 with *t filled (the caller frees it with pt_cfi_free), -ENOENT
 * when there is none, -EBADMSG when the file was rejected (and removed). */
int pt_uwcache_get(struct pt_uwcache *c, const uint8_t *bid, size_t bidlen, struct pt_unwind_table *t);
/* Keep t under build id bid (best effort; counted in st). */
void pt_uwcache_put(struct pt_uwcache *c, const uint8_t *bid, size_t bidlen,
		    const struct pt_unwind_table *t);
#endif
