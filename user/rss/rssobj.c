// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rssobj.c — file-backed and shared-memory RSS by object (rssobj.h).
 *
 * The kernel keeps one entry per object (inode) with its resident bytes now and, by the lazy
 * snapshot of the stacks, at the last RSS peak. Names: the paths of the target's maps, read
 * whenever the kernel reports new objects (session.c) and at the end, matched by device and
 * inode; an object never seen in the maps (mapped and unmapped between two reads) keeps its
 * dentry's name. Every name the target controls is sanitized before it is printed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "profile/profile.h"
#include "rss/rssobj.h"
#include "target/procmaps.h"
#include "util/fmt.h"

#define MAX_NAMES 65536


static const char *const bucket_names[2][PT_RSS_SH_BUCKETS] = {
	{ "[file pages resident before tracing]", "[file pages populated without a fault]",
	  "[file pages added by another task]", "[file pages whose mapping was not looked up]",
	  "[file pages: object table full]" },
	{ "[shmem pages resident before tracing]", "[shmem pages populated without a fault]",
	  "[shmem pages added by another task]", "[shmem pages whose mapping was not looked up]",
	  "[shmem pages: object table full]" },
};

const char *pt_rss_sh_bucket_name(int i, int b)
{
	return bucket_names[i & 1][b < PT_RSS_SH_BUCKETS ? b : 0];
}

int64_t pt_rss_sh_bucket(const struct pt_rss_sh_split *s, int b)
{
	const int64_t v[PT_RSS_SH_BUCKETS] = { s->before, s->no_fault, s->other_task, s->vma_busy,
					       s->table_full };

	return b >= 0 && b < PT_RSS_SH_BUCKETS ? v[b] : 0;
}

int64_t pt_rss_take(int64_t *from, int64_t want)
{
	int64_t t = want < *from ? want : *from;

	if (t < 0)
		t = 0;
	*from -= t;
	return want - t;
}

void pt_rss_sh_split_of(const struct pt_rss_sh_figures *f, int64_t total, struct pt_rss_sh_split *s)
{
	memset(s, 0, sizeof(*s));
	s->total = total;
	s->attributed = f->attributed;
	s->before = f->before;
	s->no_fault = f->no_fault;
	s->other_task = f->other_task;
	s->vma_busy = f->vma_busy;
	s->table_full = f->table_full;
	s->over = f->released_unknown + f->reclaimed;
	/* A decrement no object was charged with most likely took pages no object held: those
	 * resident before tracing first (attach mode: most of them), then the other buckets; only
	 * the rest stays as pages still counted on their objects. */
	s->over = pt_rss_take(&s->before, s->over);
	s->over = pt_rss_take(&s->no_fault, s->over);
	s->over = pt_rss_take(&s->other_task, s->over);
	s->over = pt_rss_take(&s->vma_busy, s->over);
	s->over = pt_rss_take(&s->table_full, s->over);
	s->mismatch = total - (s->attributed + s->before + s->no_fault + s->other_task + s->vma_busy +
			       s->table_full - s->over);
}

/* ---- names -------------------------------------------------------------------------------- */

int pt_rss_names_add(struct pt_rss_objs *o, pid_t pid)
{
	struct pt_maps m = { 0 };
	uint32_t j;
	int i, err = pt_maps_read(pid, &m);

	if (err)
		return err;
	o->maps_reads++;
	for (i = 0; i < m.n; i++) {
		const struct pt_mapping *mp = &m.m[i];
		uint32_t dev = mp->dev_major << 20 | mp->dev_minor;
		struct pt_rss_name *nn;

		if (!mp->path || mp->path[0] != '/' || !mp->inode)
			continue;
		for (j = 0; j < o->nnames; j++)
			if (o->names[j].dev == dev && o->names[j].ino == mp->inode)
				break;
		if (j < o->nnames || o->nnames >= MAX_NAMES)
			continue;
		nn = realloc(o->names, (o->nnames + 1) * sizeof(*nn));
		if (!nn) {
			err = -ENOMEM;
			break;
		}
		o->names = nn;
		nn[o->nnames].dev = dev;
		nn[o->nnames].ino = mp->inode;
		nn[o->nnames].deleted = mp->deleted;
		nn[o->nnames].path = strdup(mp->path);
		if (nn[o->nnames].path)
			o->nnames++;
	}
	pt_maps_free(&m);
	return err;
}

char *pt_rss_obj_label(const struct pt_rss_obj *ob, const struct pt_rss_name *names, uint32_t n)
{
	const struct pt_rss_name *nm = NULL;
	char name[PT_RSS_OBJ_NAME + 1], raw[4200];
	uint32_t i;

	memcpy(name, ob->name, PT_RSS_OBJ_NAME);
	name[PT_RSS_OBJ_NAME] = 0;
	for (i = 0; i < n; i++)
		if (names[i].dev == ob->dev && names[i].ino == ob->ino) {
			nm = &names[i];
			break;
		}
	if (!ob->ino && !ob->dev && !name[0])
		/* no file behind the mapping (bpf/rss.bpf.h RSS_OBJ_SPECIAL) */
		snprintf(raw, sizeof(raw), "special mappings ([vdso] and such)");
	else if (ob->member == PT_RSS_SHMEM && !strncmp(name, "memfd:", 6))
		snprintf(raw, sizeof(raw), "%s", name);
	else if (ob->member == PT_RSS_SHMEM && !strcmp(name, "dev/zero"))
		/* shmem_zero_setup()'s file: MAP_SHARED | MAP_ANONYMOUS */
		snprintf(raw, sizeof(raw), "anonymous shared mapping");
	else if (ob->member == PT_RSS_SHMEM && !strncmp(name, "SYSV", 4))
		snprintf(raw, sizeof(raw), "SysV segment key 0x%s", name + 4);
	else if (nm)
		snprintf(raw, sizeof(raw), "%s%s", nm->path, nm->deleted ? " (deleted)" : "");
	else
		snprintf(raw, sizeof(raw), ".../%s (path not seen in the maps)", name);
	return pt_sanitize_dup(raw);
}

/* ---- the objects' table ------------------------------------------------------------------- */

static int cmp_rows(const void *a, const void *b)
{
	const struct pt_rss_obj_row *x = a, *y = b;

	if (x->at_peak != y->at_peak)
		return x->at_peak < y->at_peak ? 1 : -1;
	return x->now < y->now ? 1 : x->now > y->now ? -1 : 0;
}

int pt_rss_objs_read(struct pt_rss_objs *o, int map_fd, uint64_t peak_seq)
{
	__u64 key, *prev = NULL;
	struct pt_rss_obj v;
	int err = 0;

	if (o->read || map_fd < 0)
		return 0;
	while (!bpf_map_get_next_key(map_fd, prev, &key)) {
		struct pt_rss_obj_row *r, *nr;
		size_t len;

		prev = &key;
		if (bpf_map_lookup_elem(map_fd, &key, &v))
			continue;
		nr = realloc(o->row, (o->n + 1) * sizeof(*nr));
		if (!nr) {
			err = -ENOMEM;
			break;
		}
		o->row = nr;
		r = &nr[o->n];
		memset(r, 0, sizeof(*r));
		r->o = v;
		r->now = v.now;
		/* Unchanged since the last peak: what it holds now is what it held then. */
		r->at_peak = v.snap_seq == peak_seq ? v.peak : v.now;
		if (r->now <= 0 && r->at_peak <= 0)
			continue;
		r->label = pt_rss_obj_label(&v, o->names, o->nnames);
		len = (r->label ? strlen(r->label) : 1) + 16;
		r->frame = malloc(len);
		if (!r->label || !r->frame) {
			free(r->label);
			free(r->frame);
			err = -ENOMEM;
			break;
		}
		snprintf(r->frame, len, "[%s: %s]", v.member == PT_RSS_SHMEM ? "shmem" : "file", r->label);
		o->n++;
	}
	qsort(o->row, o->n, sizeof(*o->row), cmp_rows);
	o->read = true;
	return err;
}

void pt_rss_objs_free(struct pt_rss_objs *o)
{
	uint32_t i;

	for (i = 0; i < o->n; i++) {
		free(o->row[i].label);
		free(o->row[i].frame);
	}
	for (i = 0; i < o->nnames; i++)
		free(o->names[i].path);
	free(o->row);
	free(o->names);
	memset(o, 0, sizeof(*o));
}
