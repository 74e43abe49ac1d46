// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_writers.c — every output writer against a small, hand-built profile.
 *
 * Each format is written to a temporary file and compared byte for byte with
 * tests/golden/small.* (pprof: the uncompressed protobuf, small.pb). Goldens can only
 * say "nothing changed", so the test also checks the content that matters on its own:
 * the folded text in full, a decode of the protobuf, go tool pprof's reading of the
 * .pb.gz, the SVG's well-formedness and escaping, the speedscope JSON's consistency.
 *
 * After an intentional change of an output format, rewrite the goldens with
 *
 *	PEAKTRACE_UPDATE_GOLDEN=1 build/tests/unit/test_writers
 *
 * (from the repository root) and review the diff of tests/golden/ before committing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "output/pprof.h"
#include "profile/profile.h"
#include "output/output.h"
#include "profile/frames.h"
#include "util/outdir.h"

#define GOLDEN_DIR "tests/golden/"

static char tmpdir[] = "/tmp/pt-writers-XXXXXX";
static int update_golden;

/* The C++ name exercises XML/JSON escaping, the quoted one JSON escaping and the
 * folded ';' rule, frame 4 the module+offset fallback, frame 5 the bare address. */
#define CXX_NAME "Cache<std::string, Entry&>::insert(Key const&)"

static const struct {
	const char *func, *module;
	uint64_t addr, offset;
} frame_defs[] = {
	/* 0 */ { "main", "/usr/local/bin/app", 0x401000, 0x1000 },
	/* 1 */ { "handle_request", "/usr/local/bin/app", 0x401200, 0x1200 },
	/* 2 */ { CXX_NAME, "/usr/lib/libcache.so", 0x7f0000001100, 0x1100 },
	/* 3 */ { "malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6", 0x7f1000002000, 0x9a000 },
	/* 4 */ { "", "/usr/lib/libfoo.so", 0x7f2000001234, 0x1234 },
	/* 5 */ { "[unknown]", "", 0x7f00dead, 0 },
	/* 6 */ { "load \"cfg\";v2", "/usr/local/bin/app", 0x401400, 0x1400 },
	/* 7 */ { "malloc", "/usr/lib/x86_64-linux-gnu/libc.so.6", 0x7f1000002010, 0x9a010 },
	/* 8 */ { "never_used", "/usr/local/bin/app", 0x401800, 0x1800 },
};

#define MiB (1024 * 1024)

/* Leaf first. Values: alloc count/bytes, free count/bytes, live count/bytes, peak count/bytes. */
static const struct {
	uint32_t n, f[4];
	uint64_t v[PT_METRIC_MAX];
} stack_defs[] = {
	{ 4, { 3, 2, 1, 0 }, { 10, 2 * MiB, 4, MiB / 2, 6, 3 * MiB / 2, 8, 7 * MiB / 4 } },
	{ 3, { 3, 1, 0 }, { 5, MiB, 2, MiB / 4, 3, 3 * MiB / 4, 3, 3 * MiB / 4 } },
	{ 3, { 4, 5, 0 }, { 2, MiB / 2, 0, 0, 2, MiB / 2, 2, MiB / 2 } },
	{ 3, { 7, 6, 0 }, { 1, MiB / 8, 0, 0, 1, MiB / 8, 1, MiB / 8 } },
	/* same names as stack 1 (other malloc address): folded and SVG must merge them */
	{ 3, { 7, 1, 0 }, { 1, MiB / 4, 1, MiB / 8, 1, MiB / 8, 0, 0 } },
	/* all zero: every writer skips it */
	{ 2, { 3, 0 }, { 0 } },
};

#define INUSE_TOTAL (3 * MiB)

static const char folded_inuse[] =
	"main;[0x7f00dead];[libfoo.so+0x1234] 524288\n"
	"main;handle_request;" CXX_NAME ";malloc 1572864\n"
	"main;handle_request;malloc 917504\n"
	"main;load \"cfg\":v2;malloc 131072\n";

static int build_profile(struct pt_profile *p)
{
	size_t nf = sizeof(frame_defs) / sizeof(frame_defs[0]);
	size_t ns = sizeof(stack_defs) / sizeof(stack_defs[0]);
	uint32_t i;

	memset(p, 0, sizeof(*p));
	/* Heap-allocate everything, as the loader does, so pt_profile_free is exercised. */
	p->frames = calloc(nf, sizeof(*p->frames));
	p->stacks = calloc(ns, sizeof(*p->stacks));
	if (!p->frames || !p->stacks)
		return -ENOMEM;
	p->nframes = nf;
	p->nstacks = ns;
	for (i = 0; i < nf; i++) {
		p->frames[i].func = strdup(frame_defs[i].func);
		p->frames[i].module = strdup(frame_defs[i].module);
		p->frames[i].addr = frame_defs[i].addr;
		p->frames[i].offset = frame_defs[i].offset;
		if (!p->frames[i].func || !p->frames[i].module)
			return -ENOMEM;
		/* As collect.c sets it: malloc is the allocator, [0x7f00dead] other, the rest native. */
		p->frames[i].kind = (uint8_t)pt_frame_kind(&p->frames[i], "/usr/lib/x86_64-linux-gnu/libc.so.6");
	}
	for (i = 0; i < ns; i++) {
		p->stacks[i].nframes = stack_defs[i].n;
		p->stacks[i].frames = malloc(stack_defs[i].n * sizeof(uint32_t));
		if (!p->stacks[i].frames)
			return -ENOMEM;
		memcpy(p->stacks[i].frames, stack_defs[i].f, stack_defs[i].n * sizeof(uint32_t));
		memcpy(p->stacks[i].v, stack_defs[i].v, sizeof(p->stacks[i].v));
	}
	p->time_ns = 1700000000000000000ull;
	p->duration_ns = 5000000000ull;
	return 0;
}

static int slurp(const char *path, unsigned char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, n = 0, r;
	unsigned char *b = malloc(cap + 1), *nb;

	*buf = NULL;
	if (!f || !b) {
		if (f)
			fclose(f);
		free(b);
		return -1;
	}
	while ((r = fread(b + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			nb = realloc(b, cap + 1);
			if (!nb) {
				free(b);
				fclose(f);
				return -1;
			}
			b = nb;
		}
	}
	fclose(f);
	b[n] = '\0';	/* lets text files be used as strings */
	*buf = b;
	*len = n;
	return 0;
}

static int spit(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(buf, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* Compare with (or, when updating, rewrite) tests/golden/<name>. */
static void golden(const char *name, const unsigned char *buf, size_t len)
{
	char path[256], actual[256];
	unsigned char *want;
	size_t wlen, i;

	snprintf(path, sizeof(path), GOLDEN_DIR "%s", name);
	if (update_golden) {
		CHECK(spit(path, buf, len) == 0, "golden %s rewritten (%zu bytes)", path, len);
		return;
	}
	if (slurp(path, &want, &wlen)) {
		CHECK(0, "golden %s readable (run with PEAKTRACE_UPDATE_GOLDEN=1 to create)", path);
		return;
	}
	for (i = 0; i < len && i < wlen && buf[i] == want[i]; i++)
		;
	CHECK(len == wlen && i == len, "%s matches golden byte for byte (%zu bytes; first difference at %zu)",
	      name, len, i);
	if (len != wlen || i != len) {
		/* Leave the output behind for `diff`. */
		snprintf(actual, sizeof(actual), "/tmp/%s.actual", name);
		if (!spit(actual, buf, len))
			printf("# actual output saved to %s\n", actual);
	}
	free(want);
}

static void tmppath(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static int on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char dir[4096], full[4200];

	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(dir, sizeof(dir), "%.*s", (int)n, path);
		snprintf(full, sizeof(full), "%s/%s", n ? dir : ".", prog);
		if (access(full, X_OK) == 0)
			return 1;
		path += n + (path[n] == ':');
	}
	return 0;
}

/* Run a shell command, capture its stdout+stderr; returns the exit status or -1. */
static int run(const char *cmd, char *out, size_t outlen)
{
	FILE *f = popen(cmd, "r");
	size_t n = 0, r;
	int st;

	out[0] = '\0';
	if (!f)
		return -1;
	while (n + 1 < outlen && (r = fread(out + n, 1, outlen - 1 - n, f)) > 0)
		n += r;
	out[n] = '\0';
	st = pclose(f);
	return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Tool output, as comments that test runners ignore. */
static void print_commented(const char *s)
{
	while (*s) {
		size_t n = strcspn(s, "\n");

		printf("# %.*s\n", (int)n, s);
		s += n + (s[n] == '\n');
	}
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay += strlen(needle))
		n++;
	return n;
}

static void test_labels(void)
{
	struct pt_frame fr = { .func = "", .module = "/usr/lib/libfoo.so", .offset = 0x1234 };
	char *l;

	l = pt_frame_label(&fr);
	CHECK_STR(l, "[libfoo.so+0x1234]", "label: empty func falls back to module+offset");
	free(l);
	fr.func = "[unknown]";
	fr.module = "[vdso]";
	fr.offset = 0x9a0;
	l = pt_frame_label(&fr);
	CHECK_STR(l, "[vdso+0x9a0]", "label: bracketed module keeps one pair of brackets");
	free(l);
	fr.module = "";
	fr.addr = 0xdead;
	l = pt_frame_label(&fr);
	CHECK_STR(l, "[0xdead]", "label: no module falls back to the address");
	free(l);
	fr.addr = 0;
	l = pt_frame_label(&fr);
	CHECK_STR(l, "[unknown]", "label: nothing known");
	free(l);
	l = pt_clean_text("a\nb\tc\xff\xc3\xa9\xed\xa0\x80");
	CHECK_STR(l, "a b c?\xc3\xa9???", "clean_text: controls to space, invalid UTF-8 to '?'");
	free(l);
	CHECK_STR(pt_metric_name(PT_LIVE_BYTES), "inuse_space", "metric name of PT_LIVE_BYTES");
	CHECK_STR(pt_metric_unit(PT_PEAK_COUNT), "count", "metric unit of PT_PEAK_COUNT");
	CHECK_STR(pt_metric_name(PT_FREE_BYTES), "free_space", "metric name of PT_FREE_BYTES");
}

static void test_folded(const struct pt_profile *p)
{
	char path[300];
	unsigned char *buf;
	size_t len;
	FILE *f;
	int err;

	tmppath(path, sizeof(path), "small.folded");
	f = fopen(path, "w");
	err = f ? pt_write_folded(f, p, PT_LIVE_BYTES) : -errno;
	if (f)
		fclose(f);
	CHECK(err == 0, "pt_write_folded inuse_space returns 0 (got %d)", err);
	if (slurp(path, &buf, &len)) {
		CHECK(0, "read back %s", path);
		return;
	}
	CHECK(strcmp((char *)buf, folded_inuse) == 0, "folded: sorted, merged, sanitized, zero stacks skipped");
	if (strcmp((char *)buf, folded_inuse))
		print_commented((char *)buf);
	golden("small.folded", buf, len);
	free(buf);

	/* Errors surface as -errno: /dev/full fails every write with ENOSPC. */
	f = fopen("/dev/full", "w");
	if (f) {
		err = pt_write_folded(f, p, PT_LIVE_BYTES);
		fclose(f);
		CHECK(err == -ENOSPC, "folded to /dev/full returns -ENOSPC (got %d)", err);
	}
}

static void check_svg_wellformed(const char *path, const char *svg)
{
	char cmd[600], out[4096];
	int st;

	/* Balanced groups is the minimum; xmllint (libxml2-utils) parses it for real. */
	CHECK_EQ_U64(count(svg, "<g>") + count(svg, "<g "), count(svg, "</g>"), "svg: <g> and </g> balance");
	if (!on_path("xmllint")) {
		printf("ok - xmllint check skipped (xmllint not installed)\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "xmllint --noout --nonet '%s' 2>&1", path);
	st = run(cmd, out, sizeof(out));
	CHECK(st == 0 && !out[0], "svg: xmllint --noout accepts %s (status %d) %s", path, st, out);
}

static void test_flamegraph(const struct pt_profile *p)
{
	char path[300], *mem = NULL;
	size_t memlen = 0;
	unsigned char *buf;
	size_t len;
	FILE *f;
	int err;

	tmppath(path, sizeof(path), "small.svg");
	f = fopen(path, "w");
	err = f ? pt_write_flamegraph(f, p, PT_LIVE_BYTES, "peaktrace: in-use memory",
				      "pid 1234 <app> & friends") : -errno;
	if (f)
		fclose(f);
	CHECK(err == 0, "pt_write_flamegraph returns 0 (got %d)", err);
	if (slurp(path, &buf, &len)) {
		CHECK(0, "read back %s", path);
		return;
	}
	golden("small.svg", buf, len);
	check_svg_wellformed(path, (char *)buf);
	CHECK(strstr((char *)buf, "<title>all (3.00 MiB, 3145728 bytes, 100.00%)</title>") != NULL,
	      "svg: root tooltip with human-readable total");
	CHECK(strstr((char *)buf, "<title>Cache&lt;std::string, Entry&amp;&gt;::insert(Key const&amp;) "
			       "(1.50 MiB, 1572864 bytes, 50.00%)</title>") != NULL,
	      "svg: C++ name XML-escaped in tooltip");
	CHECK(strstr((char *)buf, "<title>malloc (896.00 KiB, 917504 bytes, 29.17%)</title>") != NULL,
	      "svg: merged stacks add up in one frame");
	CHECK(strstr((char *)buf, "pid 1234 &lt;app&gt; &amp; friends") != NULL, "svg: subtitle escaped");
	CHECK(strstr((char *)buf, "never_used") == NULL, "svg: unused frame absent");
	CHECK(strstr((char *)buf, "<script") && strstr((char *)buf, "function search(") &&
	      strstr((char *)buf, "function zoom("), "svg: inline search and zoom script");
	/* Self-contained: the only URL is the SVG namespace name, which is never fetched. */
	CHECK_EQ_U64(count((char *)buf, "http"), 1, "svg: no external references");
	CHECK_EQ_U64(count((char *)buf, "href"), 0, "svg: no href");
	free(buf);

	/* Count metrics get a noun, not bytes. */
	f = open_memstream(&mem, &memlen);
	err = f ? pt_write_flamegraph(f, p, PT_ALLOC_COUNT, NULL, NULL) : -errno;
	if (f)
		fclose(f);
	CHECK(err == 0 && mem && strstr(mem, "<title>all (19 allocations, 100.00%)</title>"),
	      "svg: alloc_objects tooltip counts allocations");
	CHECK(mem && strstr(mem, "Memory flame graph: alloc_objects"), "svg: default title names the metric");
	free(mem);
}

/* --- a tiny protobuf reader, enough to look inside our own encoding --- */

struct rd {
	const unsigned char *p, *end;
	int bad;
};

static uint64_t rd_varint(struct rd *r)
{
	uint64_t v = 0;
	int shift = 0;

	while (r->p < r->end && shift < 64) {
		unsigned char c = *r->p++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
		shift += 7;
	}
	r->bad = 1;
	return 0;
}

/* Next field: 1 and its number/value (varint) or bytes (length-delimited); 0 at end. */
static int rd_field(struct rd *r, uint32_t *field, uint64_t *v, struct rd *sub)
{
	uint64_t key;

	if (r->bad || r->p >= r->end)
		return 0;
	key = rd_varint(r);
	*field = key >> 3;
	switch (key & 7) {
	case 0:
		*v = rd_varint(r);
		return !r->bad;
	case 2:
		*v = rd_varint(r);
		if (r->bad || *v > (uint64_t)(r->end - r->p)) {
			r->bad = 1;
			return 0;
		}
		sub->p = r->p;
		sub->end = r->p + *v;
		sub->bad = 0;
		r->p += *v;
		return 1;
	default:
		r->bad = 1;	/* we never write other wire types */
		return 0;
	}
}

struct decoded {
	char *strings[64];
	size_t nstrings;
	uint64_t st_type[8], st_unit[8];
	size_t nst;
	uint64_t default_st, nsamples, nlocations, nfunctions, nmappings;
	uint64_t sum[8];
	uint64_t func_names[16];
	int bad;
};

static void decode(const unsigned char *buf, size_t len, struct decoded *d)
{
	struct rd r = { buf, buf + len, 0 }, s, t;
	uint32_t fld, fld2;
	uint64_t v, v2;
	size_t i;

	memset(d, 0, sizeof(*d));
	while (rd_field(&r, &fld, &v, &s)) {
		switch (fld) {
		case 1:	/* sample_type */
			while (rd_field(&s, &fld2, &v2, &t))
				if (d->nst < 8)
					(fld2 == 1 ? d->st_type : d->st_unit)[d->nst] = v2;
			d->nst++;
			break;
		case 2:	/* sample: value = field 2, packed */
			d->nsamples++;
			while (rd_field(&s, &fld2, &v2, &t))
				for (i = 0; fld2 == 2 && t.p < t.end && i < 8; i++)
					d->sum[i] += rd_varint(&t);
			break;
		case 3:
			d->nmappings++;
			break;
		case 4:
			d->nlocations++;
			break;
		case 5:	/* function: name = field 2 */
			while (rd_field(&s, &fld2, &v2, &t))
				if (fld2 == 2 && d->nfunctions < 16)
					d->func_names[d->nfunctions] = v2;
			d->nfunctions++;
			break;
		case 6:
			if (d->nstrings < 64)
				d->strings[d->nstrings++] = strndup((const char *)s.p, s.end - s.p);
			break;
		case 14:
			d->default_st = v;
			break;
		}
	}
	d->bad = r.bad;
}

static const char *dstr(const struct decoded *d, uint64_t i)
{
	return i < d->nstrings ? d->strings[i] : "(out of range)";
}

static int gunzip(const unsigned char *in, size_t len, unsigned char **out, size_t *outlen)
{
	z_stream zs = { 0 };
	size_t cap = 1 << 16;
	int ret;

	*out = malloc(cap);
	if (!*out || inflateInit2(&zs, 15 + 16) != Z_OK)
		return -1;
	zs.next_in = (unsigned char *)in;
	zs.avail_in = len;
	do {
		if (zs.total_out == cap) {
			unsigned char *n = realloc(*out, cap * 2);

			if (!n)
				break;
			*out = n;
			cap *= 2;
		}
		zs.next_out = *out + zs.total_out;
		zs.avail_out = cap - zs.total_out;
		ret = inflate(&zs, Z_NO_FLUSH);
	} while (ret == Z_OK);
	*outlen = zs.total_out;
	inflateEnd(&zs);
	return ret == Z_STREAM_END ? 0 : -1;
}

static void check_go_pprof(const char *pbgz)
{
	char cmd[1500], out[16384], *line;
	int st, failed_before = check_failed;

	if (!on_path("go")) {
		printf("ok - go tool pprof check skipped (go not installed)\n");
		return;
	}
	/* Keep go away from the network and from the user's caches and config. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && HOME='%s' GOCACHE='%s/gocache' GOPATH='%s/gopath' GOFLAGS=-mod=mod "
		 "GOTOOLCHAIN=local GOPROXY=off PPROF_TMPDIR='%s' "
		 "go tool pprof -top -sample_index=inuse_space '%s' 2>&1",
		 tmpdir, tmpdir, tmpdir, tmpdir, tmpdir, pbgz);
	st = run(cmd, out, sizeof(out));
	CHECK(st == 0, "go tool pprof -top exits 0 (got %d)", st);
	/* pprof trims C++ template and parameter lists in reports. */
	CHECK(strstr(out, " Cache::insert\n") != NULL, "go tool pprof shows the C++ function");
	CHECK(strstr(out, "[libfoo.so+0x1234]") != NULL, "go tool pprof shows the module+offset frame");
	CHECK(strstr(out, "File: app\n") != NULL, "go tool pprof: main binary is the root's module");
	/* pprof scales bytes by 1024 and names them "kB": 3 MiB in use, 2.5 MiB under malloc
	 * once the two malloc addresses are merged into one function. */
	CHECK(strstr(out, "100% of 3072kB total") != NULL, "go tool pprof: inuse_space total is 3072kB");
	line = strstr(out, "  malloc\n");
	while (line && line > out && line[-1] != '\n')
		line--;
	CHECK(line && strncmp(line + strspn(line, " "), "2560kB ", 7) == 0,
	      "go tool pprof: malloc's flat inuse_space is 2560kB");
	if (check_failed != failed_before)
		print_commented(out);
}

static void test_pprof(const struct pt_profile *p)
{
	static const char *const types[][2] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
		{ "peak_objects", "count" }, { "peak_space", "bytes" },
		{ "rss_peak_space", "bytes" },
	};
	unsigned char *buf, *gz, *plain;
	size_t len, gzlen, plainlen, i;
	struct decoded d;
	char path[300];
	int err, found = 0;

	err = pt_pprof_encode(p, &buf, &len);
	CHECK(err == 0, "pt_pprof_encode returns 0 (got %d)", err);
	if (err)
		return;
	golden("small.pb", buf, len);

	decode(buf, len, &d);
	CHECK(!d.bad, "pprof: our reader decodes the whole message");
	CHECK(d.nstrings > 0 && d.strings[0][0] == '\0', "pprof: string_table[0] is \"\"");
	CHECK_EQ_U64(d.nst, 7, "pprof: seven sample types (rss_peak_space last)");
	for (i = 0; i < 7 && i < d.nst; i++) {
		CHECK_STR(dstr(&d, d.st_type[i]), types[i][0], "pprof: sample_type name");
		CHECK_STR(dstr(&d, d.st_unit[i]), types[i][1], "pprof: sample_type unit");
	}
	CHECK_STR(dstr(&d, d.default_st), "peak_space", "pprof: default_sample_type is the at-peak one");
	CHECK_EQ_U64(d.nsamples, 5, "pprof: all-zero stack skipped");
	CHECK_EQ_U64(d.sum[3], INUSE_TOTAL, "pprof: inuse_space values sum");
	CHECK_EQ_U64(d.sum[0], 19, "pprof: alloc_objects values sum");
	CHECK_EQ_U64(d.nlocations, 8, "pprof: one location per used frame");
	CHECK_EQ_U64(d.nfunctions, 7, "pprof: functions merged by (name, module)");
	CHECK_EQ_U64(d.nmappings, 4, "pprof: one mapping per module");
	for (i = 0; i < d.nfunctions && i < 16; i++)
		found |= strcmp(dstr(&d, d.func_names[i]), CXX_NAME) == 0;
	CHECK(found, "pprof: C++ function name present unescaped");
	for (i = 0; i < d.nstrings; i++)
		free(d.strings[i]);

	tmppath(path, sizeof(path), "small.pb.gz");
	err = pt_write_pprof(path, p);
	CHECK(err == 0, "pt_write_pprof returns 0 (got %d)", err);
	if (!slurp(path, &gz, &gzlen)) {
		CHECK(gzlen > 18 && gz[0] == 0x1f && gz[1] == 0x8b, "pprof: file is gzip");
		err = gunzip(gz, gzlen, &plain, &plainlen);
		CHECK(!err && plainlen == len && !memcmp(plain, buf, len), "pprof: gunzip gives the encoding back");
		free(plain);
		free(gz);
	}
	check_go_pprof(path);
	free(buf);

	tmppath(path, sizeof(path), "missing-sub/x.pb.gz");
	err = pt_write_pprof(path, p);
	CHECK(err == -ENOENT, "pprof to a missing directory returns -ENOENT (got %d)", err);
	err = pt_write_pprof("/nonexistent-dir/x.pb.gz", p);
	CHECK(err == -EXDEV, "pprof outside the held output directory returns -EXDEV (got %d)", err);
}

static void test_speedscope(const struct pt_profile *p)
{
	char path[300], cmd[900], out[4096];
	unsigned char *buf;
	size_t len;
	FILE *f;
	int err, st;

	tmppath(path, sizeof(path), "small.speedscope.json");
	f = fopen(path, "w");
	err = f ? pt_write_speedscope(f, p, PT_LIVE_BYTES, "app \"1234\"") : -errno;
	if (f)
		fclose(f);
	CHECK(err == 0, "pt_write_speedscope returns 0 (got %d)", err);
	if (slurp(path, &buf, &len)) {
		CHECK(0, "read back %s", path);
		return;
	}
	golden("small.speedscope.json", buf, len);
	CHECK(strstr((char *)buf, "\"name\":\"load \\\"cfg\\\";v2\"") != NULL, "speedscope: quotes escaped");
	CHECK(strstr((char *)buf, "\"endValue\":3145728") != NULL, "speedscope: endValue is the total");
	CHECK(strstr((char *)buf, "never_used") == NULL, "speedscope: unused frame absent");
	free(buf);

	if (!on_path("python3")) {
		printf("ok - speedscope JSON parse skipped (python3 not installed)\n");
		return;
	}
	/* An independent JSON parser, and the invariants speedscope relies on. */
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); p=d[\"profiles\"][0]; "
		 "n=len(d[\"shared\"][\"frames\"]); "
		 "assert d[\"$schema\"]==\"https://www.speedscope.app/file-format-schema.json\"; "
		 "assert p[\"type\"]==\"sampled\" and p[\"unit\"]==\"bytes\"; "
		 "assert len(p[\"samples\"])==len(p[\"weights\"])==5; "
		 "assert sum(p[\"weights\"])==p[\"endValue\"]; "
		 "assert all(0<=i<n for s in p[\"samples\"] for i in s); "
		 "print(n, d[\"shared\"][\"frames\"][p[\"samples\"][0][0]][\"name\"])' '%s' 2>&1", path);
	st = run(cmd, out, sizeof(out));
	out[strcspn(out, "\n")] = '\0';	/* one-line report */
	CHECK(st == 0 && strcmp(out, "7 main") == 0,
	      "speedscope: valid JSON, 7 shared frames, samples root first (%s)", out);
}

static void test_edge_cases(struct pt_profile *p)
{
	struct pt_profile empty = { 0 };
	char *mem = NULL;
	size_t memlen = 0;
	unsigned char *buf;
	size_t len;
	FILE *f;
	int err;

	f = open_memstream(&mem, &memlen);
	err = f ? pt_write_flamegraph(f, &empty, PT_LIVE_BYTES, "t", NULL) : -errno;
	if (f)
		fclose(f);
	CHECK(err == 0 && mem && strstr(mem, "</svg>"), "empty profile: svg written");
	free(mem);
	mem = NULL;
	f = open_memstream(&mem, &memlen);
	err = f ? pt_write_folded(f, &empty, PT_LIVE_BYTES) : -errno;
	if (f)
		fclose(f);
	CHECK(err == 0 && memlen == 0, "empty profile: folded is empty");
	free(mem);
	mem = NULL;
	f = open_memstream(&mem, &memlen);
	err = f ? pt_write_speedscope(f, &empty, PT_LIVE_BYTES, NULL) : -errno;
	if (f)
		fclose(f);
	CHECK(err == 0 && mem && strstr(mem, "\"endValue\":0"), "empty profile: speedscope written");
	free(mem);
	err = pt_pprof_encode(&empty, &buf, &len);
	CHECK(err == 0 && len > 0, "empty profile: pprof encodes");
	if (!err)
		free(buf);

	/* A stack pointing past the frame table is refused, not read out of bounds. */
	p->stacks[0].frames[0] = p->nframes;
	f = fopen("/dev/null", "w");
	err = f ? pt_write_folded(f, p, PT_LIVE_BYTES) : -errno;
	CHECK(err == -EINVAL, "bad frame index: folded returns -EINVAL (got %d)", err);
	err = f ? pt_write_flamegraph(f, p, PT_LIVE_BYTES, NULL, NULL) : -errno;
	CHECK(err == -EINVAL, "bad frame index: flamegraph returns -EINVAL (got %d)", err);
	if (f)
		fclose(f);
	err = pt_pprof_encode(p, &buf, &len);
	CHECK(err == -EINVAL, "bad frame index: pprof returns -EINVAL (got %d)", err);
	p->stacks[0].frames[0] = stack_defs[0].f[0];
}

static void cleanup_tmpdir(void)
{
	char cmd[300];

	/* mkdtemp gave us this directory; go may have left a cache tree in it. */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "warning: could not remove %s\n", tmpdir);
}

int main(void)
{
	struct pt_profile p;
	const char *u = getenv("PEAKTRACE_UPDATE_GOLDEN");

	update_golden = u && *u && strcmp(u, "0") != 0;
	if (!mkdtemp(tmpdir) || pt_outdir_prepare(tmpdir)) {   /* outputs go through the held dir */
		perror("mkdtemp");
		return 1;
	}
	if (build_profile(&p)) {
		fprintf(stderr, "out of memory\n");
		pt_profile_free(&p);
		return 1;
	}
	test_labels();
	test_folded(&p);
	test_flamegraph(&p);
	test_pprof(&p);
	test_speedscope(&p);
	test_edge_cases(&p);
	pt_profile_free(&p);
	CHECK(p.frames == NULL && p.nstacks == 0, "pt_profile_free leaves an empty profile");
	cleanup_tmpdir();
	return CHECK_DONE();
}
