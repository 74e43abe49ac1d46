// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * arenas.c — the ARENAS section: glibc's arenas, what they hold live, what they keep resident,
 * and which setting would give the difference back.
 *
 * Live bytes come from the kernel: every block's chunk header names its arena at allocation
 * (bpf/arenas.bpf.h arena_of) and the block is counted out of the same arena at its free.
 * Memory comes from the target's mappings at the moment of reading: the main arena's heap is
 * "[heap]" (brk); a thread arena's heaps are 64 MiB-aligned anonymous mappings whose first word,
 * heap_info.ar_ptr, is the arena's address (glibc malloc/arena.c). Retained = resident - live:
 * pages the program freed but glibc kept (free chunks, tcache, top pad) plus glibc's own headers.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "util/fmt.h"
#include "arenas/arenas.h"
#include "bpf/chunk.h"
#include "target/procmaps.h"
#include "target/proc.h"

#define MIB (1024.0 * 1024.0)

/* ---- pure parts --------------------------------------------------------------------------- */

int pt_smaps_parse(const char *text, struct pt_smap *out, int max)
{
	const char *p = text;
	int n = -1;

	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		/* sscanf on a copy of the line, never on the text: glibc's sscanf first measures its
		 * whole input (strlen), which made parsing quadratic in the size of smaps (minutes
		 * for a target with a few thousand mappings), and fields could run across lines. */
		char line[512];
		size_t l = len < sizeof(line) - 1 ? len : sizeof(line) - 1;
		unsigned long long s, e, kb;
		char perms[8];
		int off = 0;

		memcpy(line, p, l);
		line[l] = 0;
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s%n", &s, &e, perms, &off) == 3 && off > 0) {
			const char *name = line + off;

			if (n + 1 >= max)
				break;
			n++;
			while (name < line + l && *name == ' ')
				name++;
			memset(&out[n], 0, sizeof(out[n]));
			out[n].start = s;
			out[n].end = e;
			out[n].rw = perms[0] == 'r' && perms[1] == 'w';
			/* A line longer than the copy names a file (a long path): neither of these. */
			out[n].heap = l == len && (size_t)(line + l - name) == 6 && !strncmp(name, "[heap]", 6);
			out[n].anon = (l == len && name == line + l) || out[n].heap;
		} else if (n >= 0 && sscanf(line, "Rss: %llu kB", &kb) == 1) {
			out[n].rss = kb * 1024;
		}
		p = eol ? eol + 1 : NULL;
	}
	return n + 1;
}

bool pt_smap_heap_candidate(const struct pt_smap *m)
{
	return m->anon && !m->heap && m->rw && (m->start & (PT_HEAP_MAX_SIZE - 1)) == 0;
}

bool pt_heap_info_ok(const uint64_t w[4], uint64_t h)
{
	const uint64_t page = 4096, in = PT_HEAP_MAX_SIZE - 1;

	if (!w[2] || ((w[2] | w[3]) & (page - 1)) || w[2] > w[3] || w[3] > PT_HEAP_MAX_SIZE ||
	    (w[0] & 7))
		return false;
	if (!w[1])
		return w[0] >= h && w[0] < h + page;
	return !(w[1] & in) && w[1] != h && (w[0] & in) < page && (w[0] & ~in) != h &&
	       w[0] >= PT_HEAP_MAX_SIZE;
}

void pt_arenas_attribute(struct pt_arena_row *rows, int nrows, const struct pt_smap *m, int nm,
			 const uint64_t *first_word)
{
	int i, k;

	for (k = 0; k < nrows; k++) {
		rows[k].heaps = 0;
		rows[k].mapped_bytes = rows[k].resident_bytes = 0;
	}
	for (i = 0; i < nm; i++) {
		for (k = 0; k < nrows; k++) {
			struct pt_arena_row *r = &rows[k];

			if (r->main ? !m[i].heap
				    : !(pt_smap_heap_candidate(&m[i]) && first_word[i] && first_word[i] == r->addr))
				continue;
			r->heaps++;
			r->mapped_bytes += m[i].end - m[i].start;
			r->resident_bytes += m[i].rss;
			break;
		}
	}
	for (k = 0; k < nrows; k++) {
		int64_t d = (int64_t)rows[k].resident_bytes - rows[k].st.live_chunk_bytes;

		rows[k].retained_bytes = d > 0 ? d : 0;
	}
}

/* Attached, blocks from before the attach look retained: at most what was resident then. */
static int64_t retained_floor(const struct pt_arenas *a)
{
	if (a->from_start || a->attach_resident <= 0)
		return a->retained_bytes;
	return a->retained_bytes > a->attach_resident ? a->retained_bytes - a->attach_resident : 0;
}

static void add_advice(struct pt_arenas *a, enum pt_advice_kind kind, const char *setting,
		       int64_t bytes, const char *why, const char *cost)
{
	struct pt_advice *v;

	if (a->nadvice >= PT_MAX_ADVICE)
		return;
	v = &a->advice[a->nadvice++];
	v->kind = kind;
	snprintf(v->setting, sizeof(v->setting), "%s", setting);
	v->addresses_bytes = bytes;
	snprintf(v->why, sizeof(v->why), "%s", why);
	snprintf(v->cost, sizeof(v->cost), "%s", cost);
}

static int cmp_advice(const void *x, const void *y)
{
	const struct pt_advice *a = x, *b = y;

	return (a->addresses_bytes < b->addresses_bytes) - (a->addresses_bytes > b->addresses_bytes);
}

/*
 * What MALLOC_MMAP_THRESHOLD_=32768 would cost, as far as this run can tell without running it:
 * what the cost consists of and how often it would be paid, never a price. A price needs the
 * setting run (untraced: uprobes make every allocation slower and hide the difference), which
 * is what --compare-env does. Measured on an ONNX Runtime function: 0.2 % of its allocations,
 * yet each invocation 1.4-3x slower (fresh zeroed pages at every large allocation).
 */
static void mmap_threshold_cost(const struct pt_arenas *a, char *cost, size_t len, uint64_t allocs)
{
	char per_inv[96] = "";

	if (a->invocations)
		snprintf(per_inv, sizeof(per_inv), ", %.1f per invocation over %" PRIu64 " invocations",
			 (double)a->large_count / (double)a->invocations, a->invocations);
	snprintf(cost, len,
		 "not measured: each allocation of 32 KiB or more becomes an mmap + munmap with fresh "
		 "zeroed pages (page faults) instead of a reused chunk: %" PRIu64 " such allocations were "
		 "seen (%.1f%% of %" PRIu64 " arena allocations%s); the time this adds is not "
		 "proportional to their share of calls. Measure it: --compare-env MALLOC_MMAP_THRESHOLD_=32768 "
		 "(time per invocation and memory from untraced runs)",
		 a->large_count, allocs ? 100.0 * (double)a->large_count / (double)allocs : 0.0, allocs, per_inv);
}

/*
 * Advice, when retention is significant: at least 4 MiB and at least 10 % of RSS (below that no
 * setting is worth its cost). Each figure is what the setting could give back at most, from what
 * was measured; the cost is what the setting adds, in the same run's counts.
 */
void pt_arenas_advise(struct pt_arenas *a)
{
	int64_t thread_ret = 0, thread_max = 0, main_ret = 0;
	uint64_t allocs = 0;
	int nthread = 0, k;
	char why[512], cost[640], b1[32], b2[32];

	a->nadvice = 0;
	for (k = 0; k < a->nrows; k++) {
		const struct pt_arena_row *r = &a->rows[k];

		allocs += r->st.alloc_count;
		if (r->main) {
			main_ret = r->retained_bytes;
			continue;
		}
		nthread++;
		thread_ret += r->retained_bytes;
		if (r->retained_bytes > thread_max)
			thread_max = r->retained_bytes;
	}
	/* Attached, the floor: what is retained even if every block older than the attach lives on. */
	a->retained_floor = retained_floor(a);
	if (a->retained_floor < 4 * 1024 * 1024 ||
	    (a->rss_bytes && (double)a->retained_floor < 0.10 * (double)a->rss_bytes))
		return;

	if (a->large_peak_bytes > 0 && !a->mmap_threshold_set) {
		int64_t n = a->large_peak_bytes < a->retained_bytes ? a->large_peak_bytes : a->retained_bytes;

		snprintf(why, sizeof(why),
			 "blocks of 32 KiB or more were served from the arenas (%" PRIu64 " allocations, up to %s "
			 "live at once); with the threshold at 32 KiB each gets its own mmap and goes back to the "
			 "kernel at free. glibc's default threshold starts at 128 KiB and rises (to 32 MiB) every "
			 "time a mmapped block is freed, so such blocks stay in the arenas. In code: "
			 "mallopt(M_MMAP_THRESHOLD, 32768)",
			 a->large_count, pt_fmt_bytes(b1, sizeof(b1), (double)a->large_peak_bytes));
		mmap_threshold_cost(a, cost, sizeof(cost), allocs);
		add_advice(a, PT_ADV_MMAP_THRESHOLD, "MALLOC_MMAP_THRESHOLD_=32768", n, why, cost);
	}
	if (nthread >= 2 && thread_ret - thread_max > 0 && !a->arena_max_set) {
		snprintf(why, sizeof(why),
			 "%d thread arenas each keep their own free memory (%s retained in all); with at most "
			 "2 arenas, threads reuse each other's freed chunks instead of growing heaps of their own. "
			 "In code: mallopt(M_ARENA_MAX, 2)",
			 nthread, pt_fmt_bytes(b1, sizeof(b1), (double)thread_ret));
		snprintf(cost, sizeof(cost),
			 "not measured: threads that allocate at the same time wait for each other's arena lock "
			 "(%d threads allocated here); measure it with --compare-env MALLOC_ARENA_MAX=2 (time "
			 "and memory from untraced runs)", a->nthreads);
		add_advice(a, PT_ADV_ARENA_MAX, "MALLOC_ARENA_MAX=2", thread_ret - thread_max, why, cost);
	}
	snprintf(why, sizeof(why),
		 "malloc_trim(0) returns every whole free page of every arena to the kernel (madvise), "
		 "including pages below live blocks that automatic trimming never reaches; call it when "
		 "an invocation ends, before the runtime asks for the next event");
	snprintf(cost, sizeof(cost),
		 "not measured: one pass over the free chunks of every arena under its lock at each call, "
		 "and the released pages fault in again when reused (%s resident in arenas now)",
		 pt_fmt_bytes(b2, sizeof(b2), (double)a->resident_bytes));
	add_advice(a, PT_ADV_TRIM, "malloc_trim(0) after each invocation", a->retained_bytes, why, cost);
	if (main_ret >= 4 * 1024 * 1024) {
		snprintf(why, sizeof(why),
			 "the main arena retains %s; a lower trim threshold returns free memory at the top "
			 "of its heap sooner (default 128 KiB, raised with the dynamic mmap threshold), but "
			 "never memory below a live block",
			 pt_fmt_bytes(b1, sizeof(b1), (double)main_ret));
		snprintf(cost, sizeof(cost), "not measured: more brk calls as the heap shrinks and grows "
			 "again; measure it with --compare-env MALLOC_TRIM_THRESHOLD_=131072");
		add_advice(a, PT_ADV_TRIM_THRESHOLD, "MALLOC_TRIM_THRESHOLD_=131072", main_ret, why, cost);
	}
	qsort(a->advice, a->nadvice, sizeof(a->advice[0]), cmp_advice);
}

/* ---- collection --------------------------------------------------------------------------- */

/* The target's glibc settings that change arenas: its environment, in its order (a later entry
 * overrides an earlier one, as glibc reads them). */
static void read_settings(struct pt_arenas *a, pid_t pid)
{
	struct pt_environ env;
	const char *p;

	a->ncpu = get_nprocs();
	a->limit = 8 * a->ncpu;
	a->limit_from = "8 x cores";
	if (pt_environ_read(pid, &env))
		return;
	for (p = pt_environ_next(&env, NULL); p; p = pt_environ_next(&env, p)) {
		const char *t;

		if (!strncmp(p, "MALLOC_ARENA_MAX=", 17) && atoi(p + 17) > 0) {
			a->limit = atoi(p + 17);
			a->limit_from = "MALLOC_ARENA_MAX";
			a->arena_max_set = true;
		} else if (!strncmp(p, "MALLOC_MMAP_THRESHOLD_=", 23)) {
			a->mmap_threshold_set = true;
		} else if (!strncmp(p, "GLIBC_TUNABLES=", 15)) {
			if ((t = strstr(p, "glibc.malloc.arena_max=")) && atoi(t + 23) > 0) {
				a->limit = atoi(t + 23);
				a->limit_from = "glibc.malloc.arena_max";
				a->arena_max_set = true;
			}
			if (strstr(p, "glibc.malloc.mmap_threshold="))
				a->mmap_threshold_set = true;
		}
	}
	pt_environ_free(&env);
}

/* A thread arena's heap_info at boundary h: its page resident (reading an untouched page could
 * make it so) and pt_heap_info_ok. */
static bool heap_at(int fd, int pm, uint64_t h, uint64_t w[4])
{
	return pt_page_resident(pm, h) && pread(fd, w, 32, (off_t)h) == 32 && pt_heap_info_ok(w, h);
}

/* Bytes of [a, e) present in pagemap pm (what smaps' Rss counts, for a piece of a mapping). */
static uint64_t present_bytes(int pm, uint64_t a, uint64_t e)
{
	uint64_t buf[512], n = 0;

	while (a < e) {
		uint64_t k = (e - a) / 4096, i;

		if (k > 512)
			k = 512;
		if (!k || pread(pm, buf, k * 8, (off_t)(a / 4096 * 8)) != (ssize_t)(k * 8))
			break;
		for (i = 0; i < k; i++)
			n += buf[i] & PT_PAGEMAP_PRESENT ? 4096 : 0;
		a += k * 4096;
	}
	return n;
}

/* The mappings of m (n of them) with the first word of every thread-arena heap at a 64 MiB
 * boundary of a read-write anonymous mapping (pt_heap_info_ok, read once), into *mout and
 * *wout: a mapping holding a heap at an inner boundary (the kernel merged it with its neighbour
 * below, or a full heap with the next one above) split at the boundary and 64 MiB above it,
 * each piece's rss from pagemap; an unsplit mapping keeps smaps' Rss. fd, pm: the target's
 * memory and pagemap (-1: nothing read, every first word 0). The number of mappings, or -1. */
/* out[*no] = mapping mp's piece [a, e), its first word w[*no] = word. */
static void piece(struct pt_smap *out, uint64_t *w, int *no, const struct pt_smap *mp, uint64_t a,
		  uint64_t e, uint64_t word)
{
	out[*no] = *mp;
	out[*no].start = a;
	out[*no].end = e;
	w[(*no)++] = word;
}

static int heaps_of_maps(const struct pt_smap *m, int n, int fd, int pm, struct pt_smap **mout,
			 uint64_t **wout)
{
	struct pt_smap *out = NULL;
	uint64_t *w = NULL;
	int i, no = 0, room = 0;

	for (i = 0; i < n; i++) {
		bool look = fd >= 0 && pm >= 0 && m[i].anon && !m[i].heap && m[i].rw;
		bool inner = m[i].end - m[i].start <= PT_HEAP_SCAN_SPAN;
		uint64_t h = (m[i].start + PT_HEAP_MAX_SIZE - 1) & ~(PT_HEAP_MAX_SIZE - 1), a = m[i].start;
		int first = no, need = look && inner && h < m[i].end ?
					       2 * (int)((m[i].end - h) / PT_HEAP_MAX_SIZE) + 3 : 2;

		if (no + need > room) {
			struct pt_smap *o;
			uint64_t *ow;

			room = 2 * (no + need) > n ? 2 * (no + need) : n;
			o = realloc(out, room * sizeof(*o));
			out = o ? o : out;
			ow = realloc(w, room * sizeof(*ow));
			w = ow ? ow : w;
			if (!o || !ow) {
				free(out);
				free(w);
				return -1;
			}
		}
		/* Pieces: before a heap, the heap (64 MiB at most), after the last; a mapping over
		 * PT_HEAP_SCAN_SPAN looked at its start only. */
		for (; look && h < m[i].end && (inner || h == m[i].start); h += PT_HEAP_MAX_SIZE) {
			uint64_t hi[4];

			if (!heap_at(fd, pm, h, hi))
				continue;
			if (h > a)
				piece(out, w, &no, &m[i], a, h, 0);
			a = h + PT_HEAP_MAX_SIZE < m[i].end ? h + PT_HEAP_MAX_SIZE : m[i].end;
			piece(out, w, &no, &m[i], h, a, hi[0]);
		}
		if (a < m[i].end)
			piece(out, w, &no, &m[i], a, m[i].end, 0);
		for (int p = first; no - first > 1 && p < no; p++)
			out[p].rss = present_bytes(pm, out[p].start, out[p].end);
	}
	*mout = out;
	*wout = w;
	return no;
}

int pt_smaps_read(pid_t pid, struct pt_smap **mout, uint64_t **wout)
{
	char path[64];
	char *text;
	struct pt_smap *m;
	int n, fd, pm, max = 1;

	text = pt_proc_read(pid, "smaps", NULL);
	if (!text)
		return -errno;
	for (const char *p = text; (p = strchr(p, '\n')); p++)
		max++;
	m = calloc(max, sizeof(*m));
	n = m ? pt_smaps_parse(text, m, max) : -1;
	free(text);
	if (n <= 0) {
		free(m);
		return n < 0 ? -ENOMEM : -ESRCH;   /* a process without mappings has exited */
	}
	fd = pt_proc_mem_open(pid);
	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	pm = open(path, O_RDONLY | O_CLOEXEC);
	n = heaps_of_maps(m, n, fd, pm, mout, wout);
	if (fd >= 0)
		close(fd);
	if (pm >= 0)
		close(pm);
	free(m);
	return n < 0 ? -ENOMEM : n;
}

static int cmp_tid(const void *x, const void *y)
{
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;

	return (a > b) - (a < b);
}

static int cmp_thread(const void *x, const void *y)
{
	const struct pt_thread_row *a = x, *b = y;

	if (a->tid != b->tid)
		return (a->tid > b->tid) - (a->tid < b->tid);
	return (a->arena > b->arena) - (a->arena < b->arena);
}

static struct pt_arena_row *row_add(struct pt_arenas *a)
{
	struct pt_arena_row *nr = realloc(a->rows, (a->nrows + 1) * sizeof(*nr));

	if (!nr)
		return NULL;
	a->rows = nr;
	memset(&nr[a->nrows], 0, sizeof(nr[0]));
	return &nr[a->nrows++];
}

static void totals(struct pt_arenas *a)
{
	int k;

	a->live_chunk_bytes = a->resident_bytes = a->retained_bytes = a->large_peak_bytes = 0;
	a->large_count = 0;
	for (k = 0; k < a->nrows; k++) {
		a->live_chunk_bytes += a->rows[k].st.live_chunk_bytes;
		a->resident_bytes += a->rows[k].resident_bytes;
		a->retained_bytes += a->rows[k].retained_bytes;
		a->large_peak_bytes += a->rows[k].st.large_peak_chunk_bytes;
		a->large_count += a->rows[k].st.large_count;
	}
	a->retained_floor = retained_floor(a);
}

/* Rows from the kernel's arena table: the main arena, then thread arenas by index, then the
 * arenas beyond the table lumped together. */
static int read_rows(struct pt_arenas *a, int arenas_fd, const struct pt_global *g)
{
	uint32_t last = g->arena_next < PT_ARENA_OTHER ? (uint32_t)g->arena_next : PT_ARENA_OTHER;

	for (uint32_t k = 0; k <= last; k++) {
		struct pt_arena_stats st;
		struct pt_arena_row *r;

		if (bpf_map_lookup_elem(arenas_fd, &k, &st))
			continue;
		if (k && k != PT_ARENA_OTHER && !st.addr)
			continue;   /* an index lost to a race between CPUs */
		if (k == PT_ARENA_OTHER && !st.alloc_count)
			continue;
		r = row_add(a);
		if (!r)
			return -ENOMEM;
		r->idx = k;
		r->main = k == PT_ARENA_MAIN;
		r->traced = true;
		r->addr = k == PT_ARENA_OTHER ? 0 : st.addr;
		/* The kernel keeps no live counts it can derive. */
		st.live_count = (int64_t)(st.alloc_count - st.free_count);
		st.live_bytes = (int64_t)(st.alloc_bytes - st.free_bytes);
		r->st = st;
	}
	return 0;
}

/* Every (thread, arena) row: the kernel's thread rows, one sub-row per arena kind. */
static int read_thread_rows(struct pt_arenas *a, int thread_slots_fd, const struct pt_global *g)
{
	uint32_t n = g->thread_slots + 1 < PT_TSLOT_OTHER ? (uint32_t)g->thread_slots + 1 : PT_TSLOT_OTHER;
	struct pt_thread_slot row;
	uint32_t slot;
	int sub;

	for (slot = 1; slot <= n; slot++) {
		uint32_t key = slot < n ? slot : PT_TSLOT_OTHER;

		if (bpf_map_lookup_elem(thread_slots_fd, &key, &row))
			continue;
		for (sub = 0; sub < PT_TS_N; sub++) {
			struct pt_thread_row *t, *nt;

			if (!row.c[sub].alloc_count)
				continue;
			nt = realloc(a->threads, (a->nthreads + 1) * sizeof(*nt));
			if (!nt)
				return -ENOMEM;
			a->threads = nt;
			t = &nt[a->nthreads++];
			memset(t, 0, sizeof(*t));
			t->tid = (int32_t)row.tid;
			t->st = row.c[sub];
			/* Frees by other threads are kept apart in the kernel (plain adds for the
			 * thread's own, bpf/peaktrace.h): fold them in before live_* (a union with
			 * xfree_*) is filled. */
			t->st.free_count += t->st.xfree_count;
			t->st.free_bytes += t->st.xfree_bytes;
			t->st.live_chunk_bytes -= (int64_t)t->st.xfree_chunk_bytes;
			t->st.xfree_chunk_bytes = 0;
			t->st.live_count = (int64_t)(t->st.alloc_count - t->st.free_count);
			t->st.live_bytes = (int64_t)(t->st.alloc_bytes - t->st.free_bytes);
			t->arena = sub == PT_TS_MAIN ? PT_ARENA_MAIN :
				   sub == PT_TS_ARENA0 ? row.arena[0] :
				   sub == PT_TS_ARENA1 ? row.arena[1] :
				   sub == PT_TS_MMAPPED ? PT_ARENA_MMAPPED : PT_ARENA_UNKNOWN;
			if (sub == PT_TS_ARENA1)
				t->other_arenas_count = row.extra;
			t->arena_counted = pt_arena_counts_itself(key, sub, t->arena);
		}
	}
	qsort(a->threads, a->nthreads, sizeof(a->threads[0]), cmp_thread);
	return 0;
}

/* Each traced arena's threads (sorted, once each), and each thread row's arena address. */
static int link_threads(struct pt_arenas *a)
{
	int i, k;

	for (i = 0; i < a->nthreads; i++) {
		struct pt_thread_row *t = &a->threads[i];

		for (k = 0; k < a->nrows; k++) {
			struct pt_arena_row *r = &a->rows[k];
			int32_t *nt;

			if (!r->traced || t->arena != r->idx)
				continue;
			t->arena_addr = r->addr;
			nt = realloc(r->threads, (r->nthreads + 1) * sizeof(*nt));
			if (!nt)
				return -ENOMEM;
			r->threads = nt;
			nt[r->nthreads++] = t->tid;
			break;
		}
	}
	for (k = 0; k < a->nrows; k++) {
		struct pt_arena_row *r = &a->rows[k];
		int j, o = 0;

		qsort(r->threads, r->nthreads, sizeof(r->threads[0]), cmp_tid);
		for (j = 0; j < r->nthreads; j++)
			if (!o || r->threads[o - 1] != r->threads[j])
				r->threads[o++] = r->threads[j];
		r->nthreads = o;
	}
	return 0;
}

/* Per thread: the sum of its rows (sorted by tid, then arena) and its arena. */
static int sum_threads(struct pt_arenas *a)
{
	uint64_t best = 0;       /* allocations of the current thread's arena so far */
	int i;

	a->tsum = calloc(a->nthreads ? a->nthreads : 1, sizeof(*a->tsum));
	if (!a->tsum)
		return -ENOMEM;
	for (i = 0; i < a->nthreads; i++) {
		const struct pt_thread_row *t = &a->threads[i];
		struct pt_thread_sum *u;

		if (!a->ntsum || a->tsum[a->ntsum - 1].tid != t->tid) {
			u = &a->tsum[a->ntsum++];
			u->tid = t->tid;
			u->arena = PT_ARENA_UNKNOWN;
			best = 0;
		}
		u = &a->tsum[a->ntsum - 1];
		u->st.alloc_count += t->st.alloc_count;
		u->st.alloc_bytes += t->st.alloc_bytes;
		u->st.free_count += t->st.free_count;
		u->st.free_bytes += t->st.free_bytes;
		u->st.live_count += t->st.live_count;
		u->st.live_bytes += t->st.live_bytes;
		u->st.live_chunk_bytes += t->st.live_chunk_bytes;
		u->other_arenas_count += t->other_arenas_count;
		if (t->arena == PT_ARENA_MMAPPED) {
			u->mmapped = t->st;
			if (u->arena == PT_ARENA_UNKNOWN)
				u->arena = PT_ARENA_MMAPPED;
			continue;
		}
		if (t->arena == PT_ARENA_UNKNOWN)
			continue;
		u->narenas++;
		/* Its arena: the one it allocated from most (threads rarely change arenas). */
		if (t->st.alloc_count >= best) {
			best = t->st.alloc_count;
			u->arena = t->arena;
			u->arena_addr = t->arena_addr;
		}
	}
	return 0;
}

/* Memory: the heaps of every arena, also of arenas with no traced allocation (created before we
 * attached): their first heap's first word points into that heap. */
static void read_heaps(struct pt_arenas *a, pid_t pid)
{
	struct pt_smap *m = NULL;
	uint64_t *w = NULL;
	int nm, i, k;

	nm = pt_smaps_read(pid, &m, &w);
	if (nm > 0) {
		a->memory_read = true;
		a->rss_bytes = pt_proc_status_bytes(pid, "VmRSS");
		for (i = 0; i < nm; i++) {
			bool known = false;

			if (!pt_smap_heap_candidate(&m[i]) || w[i] < m[i].start || w[i] >= m[i].start + 4096)
				continue;
			for (k = 0; k < a->nrows; k++)
				known |= !a->rows[k].main && a->rows[k].addr == w[i];
			if (!known) {
				struct pt_arena_row *r = row_add(a);

				if (!r)
					break;
				r->addr = w[i];
			}
		}
		if (a->nrows == 0) {
			struct pt_arena_row *r = row_add(a);

			if (r)
				r->main = true;
		}
		pt_arenas_attribute(a->rows, a->nrows, m, nm, w);
	}
	free(m);
	free(w);
}

/* The kernel counts an arena's allocations and frees in its own row only for the blocks no
 * single-arena thread sub-row holds (bpf/chunk.h pt_arena_counts_itself): the main arena's are
 * all in the thread rows' main-arena sub-rows, a thread arena's mostly in its threads' first
 * arena sub-row. Add those sub-rows to their arena's row. */
static void counts_from_threads(struct pt_arenas *a)
{
	for (int i = 0; i < a->nrows; i++) {
		struct pt_arena_stats *st = &a->rows[i].st;

		if (!a->rows[i].traced)
			continue;
		for (int k = 0; k < a->nthreads; k++) {
			const struct pt_thread_arena *t = &a->threads[k].st;

			if (a->threads[k].arena != a->rows[i].idx || a->threads[k].arena_counted)
				continue;
			st->alloc_count += t->alloc_count;
			st->alloc_bytes += t->alloc_bytes;
			st->free_count += t->free_count;
			st->free_bytes += t->free_bytes;
		}
		st->live_count = (int64_t)(st->alloc_count - st->free_count);
		st->live_bytes = (int64_t)(st->alloc_bytes - st->free_bytes);
	}
}

int pt_arenas_collect(struct pt_arenas *a, pid_t pid, int arenas_fd, int thread_slots_fd,
		      const struct pt_global *g)
{
	int err;

	a->collected = true;
	a->mmapped_count = g->kind_live_count[PT_CHUNK_MMAPPED];
	a->mmapped_bytes = g->kind_live_bytes[PT_CHUNK_MMAPPED];
	a->mmapped_chunk_bytes = g->kind_live_chunk_bytes[PT_CHUNK_MMAPPED];
	a->unknown_count = g->kind_live_count[PT_CHUNK_UNKNOWN];
	a->unknown_bytes = g->kind_live_bytes[PT_CHUNK_UNKNOWN];
	read_settings(a, pid);
	if ((err = read_rows(a, arenas_fd, g)) || (err = read_thread_rows(a, thread_slots_fd, g)))
		return err;
	counts_from_threads(a);
	if ((err = link_threads(a)) || (err = sum_threads(a)))
		return err;
	read_heaps(a, pid);
	totals(a);
	pt_arenas_advise(a);
	return 0;
}

int64_t pt_arenas_resident_in_memory(pid_t pid)
{
	struct pt_smap *m = NULL;
	uint64_t *w = NULL;
	int64_t sum = 0;
	int nm = pt_smaps_read(pid, &m, &w), i, j;

	if (nm <= 0)
		return -1;
	for (i = 0; i < nm; i++) {
		bool arena = m[i].heap;

		/* A thread-arena heap names its arena, which lives in the first page of a first heap. */
		for (j = 0; !arena && pt_smap_heap_candidate(&m[i]) && j < nm; j++)
			arena = pt_smap_heap_candidate(&m[j]) && w[i] >= m[j].start && w[i] < m[j].start + 4096;
		if (arena)
			sum += (int64_t)m[i].rss;
	}
	free(m);
	free(w);
	return sum;
}

int pt_arenas_totals(pid_t pid, int arenas_fd, const struct pt_global *g, int64_t *live,
		     int64_t *resident, int64_t *retained)
{
	struct pt_arenas a = { 0 };
	struct pt_smap *m = NULL;
	uint64_t *w = NULL;
	int nm, err;

	err = read_rows(&a, arenas_fd, g);
	nm = err ? err : pt_smaps_read(pid, &m, &w);
	if (nm > 0)
		pt_arenas_attribute(a.rows, a.nrows, m, nm, w);
	totals(&a);
	*live = a.live_chunk_bytes;
	*resident = a.resident_bytes;
	*retained = a.retained_bytes;
	free(m);
	free(w);
	pt_arenas_free(&a);
	return nm > 0 ? 0 : (nm ? nm : -ESRCH);
}

void pt_arenas_free(struct pt_arenas *a)
{
	int k;

	for (k = 0; k < a->nrows; k++)
		free(a->rows[k].threads);
	free(a->rows);
	free(a->threads);
	free(a->tsum);
	a->rows = NULL;
	a->threads = NULL;
	a->tsum = NULL;
	a->nrows = a->nthreads = a->ntsum = 0;
}

/* ---- output ------------------------------------------------------------------------------- */

static void arena_label(char *buf, size_t len, uint32_t arena, uint64_t addr)
{
	if (arena == PT_ARENA_MMAPPED)
		snprintf(buf, len, "mmapped");
	else if (arena == PT_ARENA_UNKNOWN)
		snprintf(buf, len, "unclassified");
	else if (arena == PT_ARENA_MAIN)
		snprintf(buf, len, "main");
	else if (!addr)
		snprintf(buf, len, "other arenas");
	else
		snprintf(buf, len, "0x%" PRIx64, addr);
}

static void row_name(char *buf, size_t len, const struct pt_arena_row *r, int ordinal)
{
	if (r->main)
		snprintf(buf, len, "main");
	else if (r->traced && !r->addr)
		snprintf(buf, len, "other arenas");
	else
		snprintf(buf, len, "arena %d", ordinal);
}

void pt_arenas_text(FILE *f, const struct pt_arenas *a)
{
	char b1[32], b2[32], b3[32], b4[32], name[32], thr[64];
	int k, ord = 0, nthread_arenas = 0;

	if (!a->collected)
		return;
	for (k = 0; k < a->nrows; k++)
		nthread_arenas += !a->rows[k].main;
	fprintf(f, "\nARENAS (glibc malloc: %d arena%s, limit %d = %s%s)\n", a->nrows,
		a->nrows == 1 ? "" : "s", a->limit, a->limit_from,
		a->nrows >= a->limit ? "; the limit is reached: new threads share arenas" : "");
	/* The last column is the arena's resident bytes as a share of the process's RSS (JSON
	 * rss_share): its own name, not "of RSS" after "retained", which read as one heading. */
	fprintf(f, "  %-14s %-18s %-12s %10s %10s %10s %10s %7s\n", "arena", "address", "threads",
		"live", "chunks", "resident", "retained", "res/RSS");
	for (k = 0; k < a->nrows; k++) {
		const struct pt_arena_row *r = &a->rows[k];
		char addr[24];

		row_name(name, sizeof(name), r, r->main ? 0 : ++ord);
		if (r->addr)
			snprintf(addr, sizeof(addr), "0x%" PRIx64, r->addr);
		else
			snprintf(addr, sizeof(addr), "-");
		if (r->nthreads == 0)
			snprintf(thr, sizeof(thr), "%s", r->traced ? "-" : "(untraced)");
		else if (r->nthreads == 1)
			snprintf(thr, sizeof(thr), "%d", r->threads[0]);
		else
			snprintf(thr, sizeof(thr), "%d (%d..)", r->nthreads, r->threads[0]);
		fprintf(f, "  %-14s %-18s %-12s %10s %10s %10s %10s", name, addr, thr,
			pt_fmt_bytes(b1, sizeof(b1), (double)r->st.live_bytes),
			pt_fmt_bytes(b2, sizeof(b2), (double)r->st.live_chunk_bytes),
			a->memory_read ? pt_fmt_bytes(b3, sizeof(b3), (double)r->resident_bytes) : "?",
			a->memory_read ? pt_fmt_bytes(b4, sizeof(b4), (double)r->retained_bytes) : "?");
		if (a->memory_read && a->rss_bytes)
			fprintf(f, " %6.1f%%", 100.0 * (double)r->resident_bytes / (double)a->rss_bytes);
		fputc('\n', f);
	}
	fprintf(f, "  %-14s %-18s %-12s %10s %10s\n", "mmapped chunks", "-", "-",
		pt_fmt_bytes(b1, sizeof(b1), (double)a->mmapped_bytes),
		pt_fmt_bytes(b2, sizeof(b2), (double)a->mmapped_chunk_bytes));
	if (a->memory_read)
		fprintf(f, "  retained in arenas: %s of %s resident (%.1f%% of RSS %s)\n",
			pt_fmt_bytes(b1, sizeof(b1), (double)a->retained_bytes),
			pt_fmt_bytes(b2, sizeof(b2), (double)a->resident_bytes),
			a->rss_bytes ? 100.0 * (double)a->retained_bytes / (double)a->rss_bytes : 0.0,
			pt_fmt_bytes(b3, sizeof(b3), (double)a->rss_bytes));
	else
		fprintf(f, "  resident and retained: unknown (the target's memory was gone when read)\n");
	fprintf(f, "  live = requested bytes of blocks allocated while tracing and not freed; chunks = "
		   "their glibc chunk sizes; retained = resident - chunks%s; res/RSS = resident / the "
		   "process's RSS\n",
		a->from_start ? "" : " (blocks allocated before attaching count as retained)");
	if (!a->from_start && a->attach_resident >= 0 && a->memory_read)
		fprintf(f, "  attached: %s of arena memory was resident when tracing began, so at least %s of "
			   "the %s is retained even if every older block is still live\n",
			pt_fmt_bytes(b1, sizeof(b1), (double)a->attach_resident),
			pt_fmt_bytes(b2, sizeof(b2), (double)a->retained_floor),
			pt_fmt_bytes(b3, sizeof(b3), (double)a->retained_bytes));
	if (a->unknown_count)
		fprintf(f, "  %" PRId64 " live blocks (%s) had no readable glibc chunk header\n",
			a->unknown_count, pt_fmt_bytes(b1, sizeof(b1), (double)a->unknown_bytes));
	if (a->ntsum) {
		fprintf(f, "  threads (allocating thread -> its arena; blocks it allocated, freed by any thread):\n");
		for (k = 0; k < a->ntsum; k++) {
			const struct pt_thread_sum *t = &a->tsum[k];
			char an[32], mm[64] = "", sev[128] = "";

			arena_label(an, sizeof(an), t->arena, t->arena_addr);
			if (t->mmapped.alloc_count && t->arena != PT_ARENA_MMAPPED)
				snprintf(mm, sizeof(mm), " (%" PRIu64 " mmapped)", (uint64_t)t->mmapped.alloc_count);
			if (t->other_arenas_count)
				snprintf(sev, sizeof(sev), "  (used several arenas; %" PRIu64
					 " allocs from a third arena or more counted under its second)",
					 t->other_arenas_count);
			else if (t->narenas > 1)
				snprintf(sev, sizeof(sev), "  (used several arenas)");
			fprintf(f, "    %-8d %-16s %8" PRIu64 " allocs%s %8" PRIu64 " frees  live %s%s\n", t->tid, an,
				(uint64_t)t->st.alloc_count, mm, (uint64_t)t->st.free_count,
				pt_fmt_bytes(b1, sizeof(b1), (double)t->st.live_bytes), sev);
		}
	}
	(void)nthread_arenas;
	if (a->nadvice) {
		fprintf(f, "  ADVICE (retention is %s, %.0f%% of RSS):\n",
			pt_fmt_bytes(b1, sizeof(b1), (double)a->retained_bytes),
			a->rss_bytes ? 100.0 * (double)a->retained_bytes / (double)a->rss_bytes : 0.0);
		for (k = 0; k < a->nadvice; k++) {
			const struct pt_advice *v = &a->advice[k];

			fprintf(f, "  - %s: addresses up to %s. Why: %s. Cost: %s.\n", v->setting,
				pt_fmt_bytes(b1, sizeof(b1), (double)v->addresses_bytes), v->why, v->cost);
		}
	}
}

/* The first screen's advice: what it addresses, and never a price this run did not measure
 * (a traced run cannot: the probes slow every allocation). */
void pt_arenas_advice_line(FILE *f, const struct pt_arenas *a, bool compare_run)
{
	const struct pt_advice *v = &a->advice[0];
	bool env = strchr(v->setting, '=') && !strchr(v->setting, ' ');
	char b1[32];

	fprintf(f, "\nADVICE: %s (addresses up to %s of memory glibc retains; why: ARENAS below)\n", v->setting,
		pt_fmt_bytes(b1, sizeof(b1), (double)v->addresses_bytes));
	if (compare_run && env)
		fprintf(f, "  its cost: not measured by this traced run; the comparison's ADVICE lines "
			   "(compare.txt) give it, measured untraced, when it compared %s\n", v->setting);
	else if (env)
		fprintf(f, "  its cost: not measured (what it consists of: ARENAS below); measure it with "
			   "--compare-env %s, which also runs the command untraced\n", v->setting);
	else
		fprintf(f, "  its cost: not measured (what it consists of: ARENAS below)\n");
}

static void json_row(FILE *f, const struct pt_arena_row *r, const char *name, const struct pt_arenas *a)
{
	int j;

	fprintf(f, "{\"name\": ");
	pt_json_str(f, name);
	fprintf(f, ", \"address\": ");
	if (r->addr)
		fprintf(f, "\"0x%" PRIx64 "\"", r->addr);
	else
		fprintf(f, "null");
	fprintf(f, ", \"kind\": \"%s\", \"traced\": %s, \"threads\": [", r->main ? "main" : "thread",
		r->traced ? "true" : "false");
	for (j = 0; j < r->nthreads; j++)
		fprintf(f, "%s%d", j ? ", " : "", r->threads[j]);
	fprintf(f, "], \"live_count\": %" PRId64 ", \"live_bytes\": %" PRId64 ", \"live_chunk_bytes\": %" PRId64
		   ", \"peak_chunk_bytes\": %" PRId64 ", \"alloc_count\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64
		   ", \"free_count\": %" PRIu64 ", \"free_bytes\": %" PRIu64 ", \"large_count\": %" PRIu64
		   ", \"large_bytes\": %" PRIu64 ", \"large_peak_chunk_bytes\": %" PRId64,
		(int64_t)r->st.live_count, (int64_t)r->st.live_bytes, (int64_t)r->st.live_chunk_bytes,
		(int64_t)r->st.peak_chunk_bytes, (uint64_t)r->st.alloc_count, (uint64_t)r->st.alloc_bytes,
		(uint64_t)r->st.free_count, (uint64_t)r->st.free_bytes, (uint64_t)r->st.large_count,
		(uint64_t)r->st.large_bytes, (int64_t)r->st.large_peak_chunk_bytes);
	if (a->memory_read)
		fprintf(f, ", \"heaps\": %d, \"mapped_bytes\": %" PRIu64 ", \"resident_bytes\": %" PRIu64
			   ", \"retained_bytes\": %" PRId64 ", \"rss_share\": %.4f}",
			r->heaps, r->mapped_bytes, r->resident_bytes, r->retained_bytes,
			a->rss_bytes ? (double)r->resident_bytes / (double)a->rss_bytes : 0.0);
	else
		fprintf(f, ", \"heaps\": null, \"mapped_bytes\": null, \"resident_bytes\": null"
			   ", \"retained_bytes\": null, \"rss_share\": null}");
}

static void json_ta(FILE *f, const struct pt_thread_arena *t)
{
	fprintf(f, ", \"alloc_count\": %" PRIu64 ", \"alloc_bytes\": %" PRIu64 ", \"free_count\": %" PRIu64
		   ", \"free_bytes\": %" PRIu64 ", \"live_count\": %" PRId64 ", \"live_bytes\": %" PRId64
		   ", \"live_chunk_bytes\": %" PRId64,
		(uint64_t)t->alloc_count, (uint64_t)t->alloc_bytes, (uint64_t)t->free_count,
		(uint64_t)t->free_bytes, (int64_t)t->live_count, (int64_t)t->live_bytes,
		(int64_t)t->live_chunk_bytes);
}

void pt_arenas_json(FILE *f, const struct pt_arenas *a)
{
	char name[32];
	int k, ord = 0;

	fprintf(f, "{\"allocator\": ");
	pt_json_str(f, a->allocator ? a->allocator : "?");
	fprintf(f, ", \"covered\": %s", a->collected ? "true" : "false");
	if (!a->collected) {
		fprintf(f, ", \"message\": ");
		if (a->allocator && strcmp(a->allocator, "glibc")) {
			char msg[160];

			snprintf(msg, sizeof(msg), "arena accounting covers glibc malloc only; this process "
				 "uses %s, whose allocations are still traced", a->allocator);
			pt_json_str(f, msg);
		} else {
			pt_json_str(f, "arena accounting was off (--no-arenas)");
		}
		fprintf(f, "}");
		return;
	}
	fprintf(f, ", \"message\": \"\", \"limit\": %d, \"limit_from\": \"%s\", \"cores\": %d, \"count\": %d"
		   ", \"from_start\": %s, \"memory_read\": %s, \"rss_bytes\": %" PRIu64 ",\n    \"list\": [",
		a->limit, a->limit_from, a->ncpu, a->nrows, a->from_start ? "true" : "false",
		a->memory_read ? "true" : "false", a->rss_bytes);
	for (k = 0; k < a->nrows; k++) {
		row_name(name, sizeof(name), &a->rows[k], a->rows[k].main ? 0 : ++ord);
		fprintf(f, "%s\n      ", k ? "," : "");
		json_row(f, &a->rows[k], name, a);
	}
	fprintf(f, "],\n    \"mmapped\": {\"live_count\": %" PRId64 ", \"live_bytes\": %" PRId64
		   ", \"live_chunk_bytes\": %" PRId64 "},\n    \"unclassified\": {\"live_count\": %" PRId64
		   ", \"live_bytes\": %" PRId64 "},\n    \"threads\": [",
		a->mmapped_count, a->mmapped_bytes, a->mmapped_chunk_bytes, a->unknown_count, a->unknown_bytes);
	for (k = 0; k < a->ntsum; k++) {
		const struct pt_thread_sum *t = &a->tsum[k];
		char an[32];
		int j, first = 1;

		arena_label(an, sizeof(an), t->arena, t->arena_addr);
		fprintf(f, "%s\n      {\"tid\": %d, \"arena\": \"%s\"", k ? "," : "", t->tid, an);
		json_ta(f, &t->st);
		fprintf(f, ", \"mmapped_alloc_count\": %" PRIu64 ", \"by_arena\": [", (uint64_t)t->mmapped.alloc_count);
		for (j = 0; j < a->nthreads; j++) {
			const struct pt_thread_row *r = &a->threads[j];

			if (r->tid != t->tid)
				continue;
			arena_label(an, sizeof(an), r->arena, r->arena_addr);
			fprintf(f, "%s{\"arena\": \"%s\"", first ? "" : ", ", an);
			json_ta(f, &r->st);
			fprintf(f, ", \"other_arenas_alloc_count\": %" PRIu64, r->other_arenas_count);
			fputc('}', f);
			first = 0;
		}
		fprintf(f, "]}");
	}
	fprintf(f, "],\n    \"totals\": {\"live_chunk_bytes\": %" PRId64, a->live_chunk_bytes);
	if (a->memory_read)
		fprintf(f, ", \"resident_bytes\": %" PRId64 ", \"retained_bytes\": %" PRId64
			   ", \"retained_floor_bytes\": %" PRId64 ", \"attach_resident_bytes\": %" PRId64 "}",
			a->resident_bytes, a->retained_bytes, a->retained_floor,
			a->from_start ? (int64_t)0 : a->attach_resident);
	else
		fprintf(f, ", \"resident_bytes\": null, \"retained_bytes\": null}");
	fprintf(f, ",\n    \"advice\": [");
	for (k = 0; k < a->nadvice; k++) {
		const struct pt_advice *v = &a->advice[k];

		fprintf(f, "%s\n      {\"setting\": ", k ? "," : "");
		pt_json_str(f, v->setting);
		fprintf(f, ", \"addresses_bytes\": %" PRId64 ", \"why\": ", v->addresses_bytes);
		pt_json_str(f, v->why);
		fprintf(f, ", \"cost\": ");
		pt_json_str(f, v->cost);
		fprintf(f, "}");
	}
	fprintf(f, "]}");
}
