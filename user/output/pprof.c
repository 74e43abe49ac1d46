// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pprof.c — gzip'd perftools.profiles.Profile (github.com/google/pprof proto/profile.proto),
 * encoded by hand: the schema is small and stable, and a protobuf library would be a
 * build dependency for a few dozen lines of varints.
 *
 * Everything that needs an order (string table, function and mapping ids) is sorted,
 * so the same profile always encodes to the same bytes and golden files stay stable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "output/output.h"
#include "output/pprof.h"
#include "util/outdir.h"

/* Field numbers from profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUETYPE_TYPE = 1,
	VALUETYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1,
	SAMPLE_VALUE = 2,

	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,

	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1,
	LINE_LINE = 2,

	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

enum { WT_VARINT = 0, WT_LEN = 2 };

/* The sample types, in the order the header promises. peak_space is the default: "what was
 * live at the peak" is the question peaktrace answers; inuse_space at the end is usually a few
 * kB of leftovers. rss_peak_space (the anonymous pages each stack faulted in, held at the RSS
 * peak: bpf/rss.bpf.h) comes after the first six so their indexes stay. */
static const enum pt_metric sample_metrics[] = {
	PT_ALLOC_COUNT, PT_ALLOC_BYTES, PT_LIVE_COUNT, PT_LIVE_BYTES, PT_PEAK_COUNT, PT_PEAK_BYTES,
	PT_RSS_PEAK_BYTES,
};
#define NSAMPLE_TYPES (sizeof(sample_metrics) / sizeof(sample_metrics[0]))
#define DEFAULT_SAMPLE PT_PEAK_BYTES
/* --light has no heap figures: a zero there would read as "nothing allocated", so its profile
 * has the one type it measured (absent, not zero). */
static const enum pt_metric light_metrics[] = { PT_RSS_PEAK_BYTES };

/* A growable output buffer with a sticky error, so encoders need no checks per call. */
struct pb {
	unsigned char *d;
	size_t len, cap;
	int err;
};

/* Where the top-level message goes as it is made, when not kept whole (pt_write_pprof_mode):
 * the samples are most of it (4.9 MB at 2^17 stacks), and holding all of it until the end was
 * the tracer's largest allocation after the profile. */
struct pb_sink {
	int (*put)(void *ctx, const unsigned char *d, size_t n);
	void *ctx;
};
#define PB_FLUSH (256u << 10)

/* The top-level message's bytes so far to the sink, if any (each field is complete there). */
static void pb_flush(struct pb *b, struct pb_sink *sink)
{
	int err;

	if (!sink || b->err || !b->len)
		return;
	if ((err = sink->put(sink->ctx, b->d, b->len)))
		b->err = err;
	b->len = 0;
}

static void pb_raw(struct pb *b, const void *p, size_t n)
{
	if (b->err)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		unsigned char *d;

		while (cap < b->len + n)
			cap *= 2;
		d = realloc(b->d, cap);
		if (!d) {
			b->err = -ENOMEM;
			return;
		}
		b->d = d;
		b->cap = cap;
	}
	if (n)
		memcpy(b->d + b->len, p, n);
	b->len += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	unsigned char t[10];
	size_t n = 0;

	do {
		t[n] = v & 0x7f;
		v >>= 7;
		if (v)
			t[n] |= 0x80;
		n++;
	} while (v);
	pb_raw(b, t, n);
}

static void pb_key(struct pb *b, uint32_t field, uint32_t wt)
{
	pb_varint(b, (uint64_t)field << 3 | wt);
}

/* proto3 scalars: zero is the default and is simply not sent. */
static void pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, WT_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t n)
{
	pb_key(b, field, WT_LEN);
	pb_varint(b, n);
	pb_raw(b, p, n);
}

/* Append sub as an embedded message (or packed field) and empty it for reuse. */
static void pb_sub(struct pb *b, uint32_t field, struct pb *sub)
{
	if (sub->err && !b->err)
		b->err = sub->err;
	pb_bytes(b, field, sub->d, sub->len);
	sub->len = 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

struct strtab {
	const char **s;
	size_t n;
};

/* Index of s in the sorted, de-duplicated table; s is always present. */
static uint64_t str_idx(const struct strtab *t, const char *s)
{
	const char **hit = bsearch(&s, t->s, t->n, sizeof(*t->s), str_cmp);

	return hit ? (uint64_t)(hit - t->s) : 0;
}

struct func_key {
	uint64_t name, file;
	uint32_t frame;
};


static int func_cmp(const void *a, const void *b)
{
	const struct func_key *x = a, *y = b;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

struct enc {
	const struct pt_profile *p;
	const enum pt_metric *mt;	/* the sample types written */
	size_t nmt;
	enum pt_metric def;		/* the default one */
	char **labels;		/* per frame */
	char **modules;		/* per used frame: cleaned module path, NULL if none */
	uint8_t *used;		/* per frame: referenced by a kept stack */
	struct strtab st;
	uint32_t *loc_id, *func_id, *map_id;	/* per frame, 0 = none */
	uint32_t *map_of_str;	/* per string: mapping id if it names a module */
	uint64_t *map_lo, *map_hi;	/* per mapping id - 1: address range seen */
	uint64_t *map_file;	/* per mapping id - 1: string index of the path */
	uint64_t *map_build;	/* per mapping id - 1: string index of the build id, 0 if none */
	uint32_t nmaps;
	struct func_key *fk;
	uint32_t nused;
};

static int stack_kept(const struct enc *e, const struct pt_stack *s)
{
	size_t i;

	for (i = 0; i < e->nmt; i++)
		if (s->v[e->mt[i]])
			return 1;
	return 0;
}

/* A frame's function as pprof should see it: Python frames by their code object
 * ("module:qualname", the line goes to Line.line), native ones by their label. */
static const char *func_of(const struct enc *v, uint32_t k)
{
	return v->p->frames[k].func_name ? v->p->frames[k].func_name : v->labels[k];
}

/* The function's file: the source file when known (DWARF, the .py path), else the module. */
static const char *file_of(const struct enc *v, uint32_t k)
{
	return v->p->frames[k].file ? v->p->frames[k].file : v->modules[k];
}

static void enc_free(struct enc *e)
{
	uint32_t i;

	if (e->modules)
		for (i = 0; i < e->p->nframes; i++)
			free(e->modules[i]);
	free(e->modules);
	pt_labels_free(e->labels, e->p->nframes);
	free(e->used);
	free(e->st.s);
	free(e->loc_id);
	free(e->func_id);
	free(e->map_id);
	free(e->map_of_str);
	free(e->map_lo);
	free(e->map_hi);
	free(e->map_file);
	free(e->map_build);
	free(e->fk);
}

#define UNNUMBERED UINT32_MAX	/* module seen, mapping id not given yet */

/* Decide the string table and every id before writing anything. */
static int enc_prepare(struct enc *e)
{
	const struct pt_profile *p = e->p;
	size_t nf = p->nframes ? p->nframes : 1, ns = 0, i, j;
	uint32_t k, id;
	int err;

	err = pt_profile_labels(p, &e->labels);
	if (err)
		return err;
	e->modules = calloc(nf, sizeof(*e->modules));
	e->used = calloc(nf, 1);
	e->loc_id = calloc(nf, sizeof(*e->loc_id));
	e->func_id = calloc(nf, sizeof(*e->func_id));
	e->map_id = calloc(nf, sizeof(*e->map_id));
	e->fk = calloc(nf, sizeof(*e->fk));
	/* "" + two per sample type + "space" + per frame: label, module, function, source
	 * file, build id */
	e->st.s = calloc(3 + 2 * e->nmt + 5 * nf, sizeof(*e->st.s));
	if (!e->modules || !e->used || !e->loc_id || !e->func_id || !e->map_id || !e->fk ||
	    !e->st.s)
		return -ENOMEM;

	for (i = 0; i < p->nstacks; i++) {
		if (!stack_kept(e, &p->stacks[i]))
			continue;
		for (j = 0; j < p->stacks[i].nframes; j++)
			e->used[p->stacks[i].frames[j]] = 1;
	}

	/* string_table[0] must be "": sorting puts it first since it sorts lowest. */
	e->st.s[ns++] = "";
	for (i = 0; i < e->nmt; i++) {
		e->st.s[ns++] = pt_metric_name(e->mt[i]);
		e->st.s[ns++] = pt_metric_unit(e->mt[i]);
	}
	e->st.s[ns++] = "space";
	for (k = 0; k < p->nframes; k++) {
		const char *mod = p->frames[k].module;

		if (!e->used[k])
			continue;
		e->st.s[ns++] = e->labels[k];
		if (mod && *mod) {
			e->modules[k] = pt_clean_text(mod);
			if (!e->modules[k])
				return -ENOMEM;
			e->st.s[ns++] = e->modules[k];
		}
		if (p->frames[k].func_name)
			e->st.s[ns++] = p->frames[k].func_name;
		if (p->frames[k].file)
			e->st.s[ns++] = p->frames[k].file;
		if (p->frames[k].build_id)
			e->st.s[ns++] = p->frames[k].build_id;
	}
	qsort(e->st.s, ns, sizeof(*e->st.s), str_cmp);
	for (i = j = 0; i < ns; i++)
		if (!j || strcmp(e->st.s[j - 1], e->st.s[i]))
			e->st.s[j++] = e->st.s[i];
	e->st.n = j;

	/* One mapping per module. pprof takes mapping 1 for the main binary (its "File:"
	 * line), and the outermost frame (_start, main) lives in the executable, so the
	 * root frame's module goes first; the rest follow in path order. */
	e->map_of_str = calloc(e->st.n, sizeof(*e->map_of_str));
	if (!e->map_of_str)
		return -ENOMEM;
	for (k = 0; k < p->nframes; k++)
		if (e->modules[k])
			e->map_of_str[str_idx(&e->st, e->modules[k])] = UNNUMBERED;
	for (i = 0; i < p->nstacks; i++) {
		const struct pt_stack *s = &p->stacks[i];
		const char *root;

		if (!stack_kept(e, s) || !s->nframes)
			continue;
		root = e->modules[s->frames[s->nframes - 1]];
		if (root) {
			e->map_of_str[str_idx(&e->st, root)] = ++e->nmaps;
			break;
		}
	}
	for (i = 0; i < e->st.n; i++)
		if (e->map_of_str[i] == UNNUMBERED)
			e->map_of_str[i] = ++e->nmaps;
	e->map_lo = calloc(e->nmaps ? e->nmaps : 1, sizeof(*e->map_lo));
	e->map_hi = calloc(e->nmaps ? e->nmaps : 1, sizeof(*e->map_hi));
	e->map_file = calloc(e->nmaps ? e->nmaps : 1, sizeof(*e->map_file));
	e->map_build = calloc(e->nmaps ? e->nmaps : 1, sizeof(*e->map_build));
	if (!e->map_lo || !e->map_hi || !e->map_file || !e->map_build)
		return -ENOMEM;
	for (i = 0; i < e->st.n; i++)
		if (e->map_of_str[i])
			e->map_file[e->map_of_str[i] - 1] = i;

	/* Locations: one per frame, numbered in frame order. Functions: one per distinct
	 * (name, module), so two call sites in one function aggregate in pprof. */
	for (k = 0, id = 0; k < p->nframes; k++) {
		uint64_t a = p->frames[k].addr;
		uint32_t mi;

		if (!e->used[k])
			continue;
		e->loc_id[k] = ++id;
		e->fk[e->nused++] = (struct func_key){
			.name = str_idx(&e->st, func_of(e, k)),
			.file = file_of(e, k) ? str_idx(&e->st, file_of(e, k)) : 0,
			.frame = k,
		};
		if (!e->modules[k])
			continue;
		mi = e->map_of_str[str_idx(&e->st, e->modules[k])];
		e->map_id[k] = mi;
		if (p->frames[k].build_id)
			e->map_build[mi - 1] = str_idx(&e->st, p->frames[k].build_id);
		/* The range only documents where the module's frames were; has_functions
		 * tells pprof not to symbolize through it. */
		if (a && (!e->map_lo[mi - 1] || a < e->map_lo[mi - 1]))
			e->map_lo[mi - 1] = a;
		if (a && a + 1 > e->map_hi[mi - 1])
			e->map_hi[mi - 1] = a + 1;
	}
	qsort(e->fk, e->nused, sizeof(*e->fk), func_cmp);
	for (k = 0, id = 0; k < e->nused; k++) {
		if (!k || func_cmp(&e->fk[k - 1], &e->fk[k]))
			id++;
		e->func_id[e->fk[k].frame] = id;
	}
	return 0;
}

static void put_value_type(struct pb *b, struct pb *sub, uint32_t field, const struct strtab *st,
			   const char *type, const char *unit)
{
	pb_uint(sub, VALUETYPE_TYPE, str_idx(st, type));
	pb_uint(sub, VALUETYPE_UNIT, str_idx(st, unit));
	pb_sub(b, field, sub);
}

int pt_pprof_encode(const struct pt_profile *p, unsigned char **buf, size_t *len)
{
	return pt_pprof_encode_mode(p, false, buf, len);
}

static int encode(const struct pt_profile *p, bool light, struct pb *out, struct pb_sink *sink);

int pt_pprof_encode_mode(const struct pt_profile *p, bool light, unsigned char **buf, size_t *len)
{
	struct pb b = { 0 };
	int err;

	*buf = NULL;
	*len = 0;
	err = encode(p, light, &b, NULL);
	if (err) {
		free(b.d);
		return err;
	}
	*buf = b.d;
	*len = b.len;
	return 0;
}

/* The whole message into *out, or through sink as it is made (out then ends empty). */
static int encode(const struct pt_profile *p, bool light, struct pb *out, struct pb_sink *sink)
{
	struct pb sub = { 0 }, sub2 = { 0 }, *bp = out;
	struct enc e = {
		.p = p,
		.mt = light ? light_metrics : sample_metrics,
		.nmt = light ? 1 : NSAMPLE_TYPES,
		.def = light ? PT_RSS_PEAK_BYTES : DEFAULT_SAMPLE,
	};
	uint32_t i, j;
	int err;

	err = pt_profile_check(p);
	if (err)
		return err;
	err = enc_prepare(&e);
	if (err)
		goto out;

	for (i = 0; i < e.nmt; i++)
		put_value_type(bp, &sub, PROFILE_SAMPLE_TYPE, &e.st, pt_metric_name(e.mt[i]),
			       pt_metric_unit(e.mt[i]));

	for (i = 0; i < p->nstacks; i++) {
		const struct pt_stack *s = &p->stacks[i];

		if (!stack_kept(&e, s))
			continue;
		/* Packed repeated fields; frames[0] is the leaf, as pprof wants. */
		for (j = 0; j < s->nframes; j++)
			pb_varint(&sub2, e.loc_id[s->frames[j]]);
		if (s->nframes)
			pb_sub(&sub, SAMPLE_LOCATION_ID, &sub2);
		for (j = 0; j < e.nmt; j++)
			pb_varint(&sub2, s->v[e.mt[j]]);
		pb_sub(&sub, SAMPLE_VALUE, &sub2);
		pb_sub(bp, PROFILE_SAMPLE, &sub);
		if (bp->len >= PB_FLUSH)
			pb_flush(bp, sink);
	}

	/* In id order: pprof reads the first mapping as the main binary. */
	for (i = 0; i < e.nmaps; i++) {
		pb_uint(&sub, MAPPING_ID, i + 1);
		pb_uint(&sub, MAPPING_MEMORY_START, e.map_lo[i]);
		pb_uint(&sub, MAPPING_MEMORY_LIMIT, e.map_hi[i]);
		pb_uint(&sub, MAPPING_FILENAME, e.map_file[i]);
		pb_uint(&sub, MAPPING_BUILD_ID, e.map_build[i]);
		/* Names are already resolved: pprof must not try to symbolize again. */
		pb_uint(&sub, MAPPING_HAS_FUNCTIONS, 1);
		pb_sub(bp, PROFILE_MAPPING, &sub);
	}

	for (i = 0; i < p->nframes; i++) {
		if (!e.used[i])
			continue;
		pb_uint(&sub, LOCATION_ID, e.loc_id[i]);
		pb_uint(&sub, LOCATION_MAPPING_ID, e.map_id[i]);
		pb_uint(&sub, LOCATION_ADDRESS, p->frames[i].addr);
		pb_uint(&sub2, LINE_FUNCTION_ID, e.func_id[i]);
		pb_uint(&sub2, LINE_LINE, p->frames[i].line);
		pb_sub(&sub, LOCATION_LINE, &sub2);
		pb_sub(bp, PROFILE_LOCATION, &sub);
	}

	for (i = 0; i < e.nused; i++) {
		const struct func_key *k = &e.fk[i];

		if (i && !func_cmp(&e.fk[i - 1], k))
			continue;
		pb_uint(&sub, FUNCTION_ID, e.func_id[k->frame]);
		pb_uint(&sub, FUNCTION_NAME, k->name);
		/* A Python name has no system name; sending one equal to the name would let
		 * pprof "demangle" it as C++ and cut "<module>" out of "wl:<module>". */
		if (!p->frames[k->frame].func_name)
			pb_uint(&sub, FUNCTION_SYSTEM_NAME, k->name);
		pb_uint(&sub, FUNCTION_FILENAME, k->file);
		pb_uint(&sub, FUNCTION_START_LINE, p->frames[k->frame].start_line);
		pb_sub(bp, PROFILE_FUNCTION, &sub);
	}

	/* Repeated strings are sent even when empty: entry 0 must exist. */
	for (i = 0; i < e.st.n; i++)
		pb_bytes(bp, PROFILE_STRING_TABLE, e.st.s[i], strlen(e.st.s[i]));

	pb_uint(bp, PROFILE_TIME_NANOS, p->time_ns);
	pb_uint(bp, PROFILE_DURATION_NANOS, p->duration_ns);
	/* Every byte is counted (no sampling period to scale by). */
	put_value_type(bp, &sub, PROFILE_PERIOD_TYPE, &e.st, "space", "bytes");
	pb_uint(bp, PROFILE_PERIOD, 1);
	pb_uint(bp, PROFILE_DEFAULT_SAMPLE_TYPE, str_idx(&e.st, pt_metric_name(e.def)));

	pb_flush(bp, sink);
	err = bp->err ? bp->err : sub.err ? sub.err : sub2.err;
out:
	free(sub.d);
	free(sub2.d);
	enc_free(&e);
	return err;
}

static int write_all(int fd, const unsigned char *d, size_t n)
{
	while (n) {
		ssize_t w = write(fd, d, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		d += w;
		n -= w;
	}
	return 0;
}

/* zlib's level 6 (its default) spent twice the time of level 5 on the repetitive sample
 * records of many stacks, for no gain: at 2^17 stacks (4.9 MB encoded) level 6 took 0.15 s and
 * wrote 998 KB, level 5 0.07 s and 981 KB (level 1: 0.04 s, 1.2 MB). */
#define PPROF_GZIP_LEVEL 5

/* gzip, streamed: the encoder's bytes go in as they are made. No gz header fields are set, so
 * mtime is 0 and the file is reproducible. */
struct gz {
	z_stream zs;
	int fd;
	unsigned char out[64 * 1024];
};

/* in[0..len) through deflate with flush, every output byte written out. */
static int gz_run(struct gz *g, const unsigned char *in, size_t len, int flush)
{
	int zret, err;

	g->zs.next_in = (unsigned char *)in;
	do {
		/* avail_in is 32-bit. */
		size_t chunk = len > (1u << 30) ? (1u << 30) : len;
		int f = len > chunk ? Z_NO_FLUSH : flush;

		g->zs.avail_in = (uInt)chunk;
		len -= chunk;
		do {
			g->zs.next_out = g->out;
			g->zs.avail_out = sizeof(g->out);
			zret = deflate(&g->zs, f);
			if (zret == Z_STREAM_ERROR)
				return -EIO;
			err = write_all(g->fd, g->out, sizeof(g->out) - g->zs.avail_out);
			if (err)
				return err;
		} while (g->zs.avail_out == 0);
	} while (len);
	return flush == Z_FINISH && zret != Z_STREAM_END ? -EIO : 0;
}

static int gz_put(void *ctx, const unsigned char *d, size_t n)
{
	return gz_run(ctx, d, n, Z_NO_FLUSH);
}

int pt_write_pprof(const char *path, const struct pt_profile *p)
{
	return pt_write_pprof_mode(path, p, false);
}

int pt_write_pprof_mode(const char *path, const struct pt_profile *p, bool light)
{
	struct gz *g = calloc(1, sizeof(*g));
	struct pb b = { 0 };
	struct pb_sink sink = { gz_put, g };
	int err;

	if (!g)
		return -ENOMEM;
	g->fd = pt_out_open(path);
	if (g->fd < 0) {
		err = -errno;
		free(g);
		return err;
	}
	/* windowBits 15 + 16 selects the gzip wrapper (pprof reads gzip, not zlib). */
	if (deflateInit2(&g->zs, PPROF_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		close(g->fd);
		pt_out_unlink(path);
		free(g);
		return -ENOMEM;
	}
	err = encode(p, light, &b, &sink);
	if (!err)
		err = gz_run(g, NULL, 0, Z_FINISH);
	deflateEnd(&g->zs);
	/* close() is where NFS and friends report a failed write-back. */
	if (close(g->fd) && !err)
		err = -errno;
	if (err)
		pt_out_unlink(path);   /* no half profile: as when the encoding failed before any write */
	free(b.d);
	free(g);
	return err;
}
