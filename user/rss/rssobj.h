/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rssobj.h — file-backed and shared-memory RSS by object (bpf/rss.bpf.h rss_objs): each file
 * or shmem object's resident bytes at the RSS peak and now, named from the target's maps
 * (collected while it runs, so objects unmapped or a target gone by the end keep their path),
 * in the text report, report.json (rss_attribution.file_shmem) and as root frames of
 * rss.folded / rss.svg ("[file: /usr/lib/...]", "[shmem: memfd:cache]").
 */
#ifndef PEAKTRACE_RSS_RSSOBJ_H
#define PEAKTRACE_RSS_RSSOBJ_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "bpf/peaktrace.h"

/* A path seen in the target's maps, by device and inode. */
struct pt_rss_name {
	uint32_t dev;      /* the kernel's s_dev: major << 20 | minor */
	uint64_t ino;
	char *path;        /* as maps prints it (raw: sanitized when labelled) */
	bool deleted;
};

struct pt_rss_obj_row {
	struct pt_rss_obj o;
	int64_t at_peak, now;
	char *label;       /* sanitized: "/usr/lib/x86_64-linux-gnu/libc.so.6", "memfd:cache", ... */
	char *frame;       /* "[file: LABEL]" or "[shmem: LABEL]" */
};

struct pt_rss_objs {
	struct pt_rss_name *names;
	uint32_t nnames;
	uint64_t maps_reads;       /* times the maps were read for names */
	bool read;                 /* the objects' table was read */
	struct pt_rss_obj_row *row; /* by bytes at the peak, most first */
	uint32_t n;
};

/* Add the file paths in the target's maps now (pid's /proc/PID/maps). 0 or -errno. */
int pt_rss_names_add(struct pt_rss_objs *o, pid_t pid);
/* Read the objects' table (map fd) against the peak sequence peak_seq and label them. */
int pt_rss_objs_read(struct pt_rss_objs *o, int map_fd, uint64_t peak_seq);
void pt_rss_objs_free(struct pt_rss_objs *o);

/* The label of an object (sanitized, malloc'ed): its maps path when one matches dev and ino,
 * else its dentry name; shmem objects by what they are (memfd:NAME, a /dev/shm path, an
 * anonymous shared mapping, a SysV segment). Pure: unit-tested. */
char *pt_rss_obj_label(const struct pt_rss_obj *ob, const struct pt_rss_name *names, uint32_t n);

/* The file or shmem counter of one moment, split (bpf/peaktrace.h pt_rss_sh_figures). */
struct pt_rss_sh_split {
	int64_t total, attributed, before, no_fault, other_task, vma_busy, table_full;
	int64_t over;       /* released_unknown + reclaimed beyond the buckets (taken from them
	                     * first: before, no_fault, other_task, vma_busy, table_full): pages
	                     * still on their objects */
	int64_t mismatch;   /* total - (attributed + buckets - over): 0 unless figures raced */
};
/* Moves up to want bytes out of *from (never below 0; nothing for want <= 0); returns what
 * is still wanted. The one step of both splits' "released pages taken from the buckets". */
int64_t pt_rss_take(int64_t *from, int64_t want);
void pt_rss_sh_split_of(const struct pt_rss_sh_figures *f, int64_t total, struct pt_rss_sh_split *s);


#define PT_RSS_SH_BUCKETS 5
/* The root frame of bucket b (0..PT_RSS_SH_BUCKETS-1) of counter i (0 file, 1 shmem), and its
 * bytes in s. */
const char *pt_rss_sh_bucket_name(int i, int b);
int64_t pt_rss_sh_bucket(const struct pt_rss_sh_split *s, int b);

struct pt_profile;

#endif
