// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * unwind_maps.c — load the target's CFI tables into the BPF maps of bpf/unwind.bpf.h.
 *
 * Layout (bpf/unwind.h):
 *  - unwind_rows: one ARRAY of rows, every file's table appended once (files are keyed by
 *    device and inode: libc mapped by many processes, or a file mapped twice, costs one
 *    table). Rows are never moved or reused: the kernel may be reading them, and code rarely
 *    leaves a process. A file that does not fit is counted (PT_ERR_UNWIND_ROWS_FULL).
 *  - unwind_maps: the executable mappings sorted by start, in two halves. A refresh writes
 *    the half the kernel does not read, then publishes it with one 8-byte store into
 *    unw_ctl.sel (the skeleton's .bss mapping) and resets unw_ctl.mm so the next walk claims
 *    the set for its address space. A sorted array was chosen over a hash keyed by page:
 *    <= 13 inlined array lookups per new mapping in a walk, no entry per page of code, and
 *    rewriting it whole is trivial.
 *  - unwind_files: (device, inode) -> rows, for the kernel's fallback on code not published
 *    yet (launch mode before the first refresh, dlopen before the refresh).
 *
 * Memory: tables are built one file at a time and copied with batched map updates, then
 * freed; the BPF arrays are never mmapped (mapping one puts all of its pages into our RSS).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gelf.h>

#include "bpf/peaktrace.h"
#include "peaktrace.skel.h"
#include "arch/arch.h"
#include "unwind/cfi.h"
#include "unwind/uwcache.h"
#include "target/procmaps.h"
#include "target/proc.h"
#include "unwind/unwind_maps.h"

/* PF_X without <elf.h> here: the loads come from elfutil.h. */
#define UW_PF_X 1

/* UW_DEFERRED: not in the cache while the target was held; built by a later refresh. */
enum { UW_LOADED = 1, UW_DEFERRED = 2, UW_FAILED = -1, UW_NO_ROOM = -2 };

struct uw_file {
	struct pt_unwind_file_key key;  /* as /proc/PID/maps names the file */
	struct pt_unwind_file_key kkey; /* as the kernel-side fallback does, where different */
	bool has_kkey;
	uint32_t first, nrows;
	int state;                      /* UW_*: failures are not retried */
	struct pt_elf_load *loads;      /* to place each mapping of it */
	int nloads;
};

struct pt_unwinder {
	pid_t pid;
	struct pt_unwind_sink sink;
	struct uw_file *files;
	uint32_t nfiles, cap;
	uint32_t next_row;
	struct pt_unwind_map *maps;     /* PT_UNWIND_MAX_MAPS, scratch for publishing */
	struct pt_unwind_stats st;
	struct pt_uwcache *cache;       /* tables by build id across runs (NULL: none) */
	bool cache_only;                /* the target waits: tables from the cache only */
	bool defer;                     /* build nothing while the target waits (cache_only) */
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The kernel's dev_t, as /proc/PID/maps prints it and as inode->i_sb->s_dev holds it. */
static uint64_t kdev(unsigned int maj, unsigned int min)
{
	return ((uint64_t)maj << 20) | min;
}

int pt_unwind_bias(const struct pt_elf_load *loads, int nloads, uint64_t start, uint64_t pgoff,
		   uint64_t *bias)
{
	int i, pass;

	/* The executable segment whose pages hold pgoff; any segment holding it otherwise.
	 * p_vaddr and p_offset are congruent modulo the page size, so adj is page aligned and
	 * pc - bias = pc - start + pgoff + (p_vaddr - p_offset) = the vaddr of pc. */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < nloads; i++) {
			const struct pt_elf_load *l = &loads[i];
			uint64_t lo = l->off & ~4095ULL;

			if (pass == 0 && !(l->flags & UW_PF_X))
				continue;
			if (pgoff < lo || pgoff >= l->off + (l->filesz ? l->filesz : 1))
				continue;
			*bias = start - pgoff - (l->vaddr - l->off);
			return 0;
		}
	}
	return -ENOENT;
}

struct pt_unwinder *pt_unwinder_new(pid_t pid, const struct pt_unwind_sink *sink)
{
	struct pt_unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->pid = pid;
	u->sink = *sink;
	if (u->sink.max_rows > PT_UNWIND_MAX_ROWS)
		u->sink.max_rows = PT_UNWIND_MAX_ROWS;
	u->maps = calloc(PT_UNWIND_MAX_MAPS, sizeof(*u->maps));
	if (!u->maps) {
		free(u);
		return NULL;
	}
	return u;
}

void pt_unwinder_free(struct pt_unwinder *u)
{
	uint32_t i;

	if (!u)
		return;
	for (i = 0; i < u->nfiles; i++)
		free(u->files[i].loads);
	free(u->files);
	free(u->maps);
	free(u);
}

const struct pt_unwind_stats *pt_unwinder_stats(const struct pt_unwinder *u)
{
	return &u->st;
}

double pt_unwind_build_ms(const struct pt_unwinder *u)
{
	return u ? u->st.build_ms : 0;
}

static struct uw_file *file_find(struct pt_unwinder *u, const struct pt_unwind_file_key *k)
{
	uint32_t i;

	for (i = 0; i < u->nfiles; i++)
		if (u->files[i].key.dev == k->dev && u->files[i].key.ino == k->ino)
			return &u->files[i];
	return NULL;
}

static struct uw_file *file_new(struct pt_unwinder *u, const struct pt_unwind_file_key *k)
{
	struct uw_file *f;

	if (u->nfiles == u->cap) {
		uint32_t cap = u->cap ? u->cap * 2 : 32;
		struct uw_file *n = realloc(u->files, cap * sizeof(*n));

		if (!n)
			return NULL;
		u->files = n;
		u->cap = cap;
	}
	f = &u->files[u->nfiles++];
	memset(f, 0, sizeof(*f));
	f->key = *k;
	f->state = UW_FAILED;
	return f;
}

/* A file tried without rows (no CFI, unreadable, no room) still gets a by-file entry, with no
 * rows: the kernel then tells "no table" (frame pointers, as before) from "not built yet"
 * (PT_ERR_UNWIND_PENDING: tables are built while the target runs). */
/* The file's by-file entry, under each name the kernel may give it. */
static void file_register(struct pt_unwinder *u, struct uw_file *f, const struct pt_unwind_file *fv)
{
	if (!u->sink.file)
		return;
	u->sink.file(u->sink.arg, &f->key, fv);
	if (f->has_kkey)
		u->sink.file(u->sink.arg, &f->kkey, fv);
}

static void file_no_rows(struct pt_unwinder *u, struct uw_file *f)
{
	struct pt_unwind_file fv = { 0 };

	file_register(u, f, &fv);
}

#define PT_OVERLAYFS_MAGIC 0x794c7630

/* On overlayfs: the key the kernel-side fallback computes for the file (the mapped file's
 * f_inode), asked of the kernel itself with one page of it mapped here (sink.kernel_key). */
static void file_kernel_key(struct pt_unwinder *u, struct uw_file *f, int fd)
{
	struct pt_unwind_file_key k;
	struct statfs sf;
	void *p;

	f->has_kkey = false;
	if (!u->sink.kernel_key || fstatfs(fd, &sf) || (unsigned long)sf.f_type != PT_OVERLAYFS_MAGIC)
		return;
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return;
	if (u->sink.kernel_key(u->sink.arg, (uint64_t)(uintptr_t)p, &k) == 0 &&
	    (k.dev != f->key.dev || k.ino != f->key.ino)) {
		f->kkey = k;
		f->has_kkey = true;
	}
	munmap(p, 4096);
}

/* Build the table of the ELF file open on fd and hand it to the sink. Sets f->state. */
static void file_load(struct pt_unwinder *u, struct uw_file *f, int fd)
{
	struct pt_unwind_table t;
	struct pt_unwind_file fv;
	struct pt_elf e;
	GElf_Ehdr eh;
	uint8_t bid[PT_UWCACHE_BID_MAX], src[PT_SHA256_LEN];
	int i, err, bidlen, got = -ENOENT;
	bool cacheable;

	file_kernel_key(u, f, fd);
	err = pt_elf_open_fd(fd, &e);
	if (err)
		goto failed;
	/* Rows are built for the file's machine and read by the BPF object of ours: a file of
	 * another (a qemu-user guest's binary) would be misread, not unwound. Refused, counted
	 * with the files whose CFI could not be read. */
	if (!gelf_getehdr(e.elf, &eh) || eh.e_machine != pt_arch_host()->elf_machine) {
		pt_elf_close(&e);
		goto failed;
	}
	bidlen = pt_elf_build_id(&e, bid, sizeof(bid));
	/* The cache's key: the build id and a digest of the CFI itself (uwcache.h: the build id
	 * is the file author's choice). No digest (no CFI, malformed): not cached. */
	cacheable = bidlen > 0 && u->cache && u->cache->on && pt_cfi_elf_digest(&e, src) == 0;
	if (cacheable && (got = pt_uwcache_get(u->cache, bid, (size_t)bidlen, src, &t)) == 0) {
		err = 0;
	} else if (u->cache_only) {
		pt_elf_close(&e);
		f->state = UW_DEFERRED;
		return;
	} else {
		err = pt_cfi_build_elf(&e, &t);
		if (!err && cacheable) {
			u->cache->st.misses++;
			/* Counted here, once, not at a deferred attempt's get. */
			u->cache->st.mismatched += got == -ESTALE;
			pt_uwcache_put(u->cache, bid, (size_t)bidlen, src, &t);
		} else if (!err && u->cache && u->cache->on && bidlen <= 0) {
			u->cache->st.no_build_id++;
		}
	}
	if (!err && e.nloads > 0) {
		f->loads = malloc(e.nloads * sizeof(*f->loads));
		if (f->loads) {
			memcpy(f->loads, e.loads, e.nloads * sizeof(*f->loads));
			f->nloads = e.nloads;
		}
	}
	pt_elf_close(&e);
	if (err)
		goto failed;
	if (!f->loads || !t.nrows) {
		pt_cfi_free(&t);
		goto failed;
	}
	if (t.nrows > u->sink.max_rows - u->next_row) {
		pt_cfi_free(&t);
		f->state = UW_NO_ROOM;
		u->st.rows_full++;
		file_no_rows(u, f);
		return;
	}
	err = u->sink.rows(u->sink.arg, u->next_row, t.rows, t.nrows);
	if (err) {
		pt_cfi_free(&t);
		goto failed;
	}
	f->first = u->next_row;
	f->nrows = t.nrows;
	u->next_row += t.nrows;
	pt_cfi_free(&t);
	f->state = UW_LOADED;
	u->st.files++;
	u->st.rows = u->next_row;
	/* The by-file fallback places a mapping with its executable segment. */
	fv.first = f->first;
	fv.nrows = f->nrows;
	fv.adj = 0;
	for (i = 0; i < f->nloads; i++) {
		if (f->loads[i].flags & UW_PF_X) {
			fv.adj = f->loads[i].vaddr - f->loads[i].off;
			break;
		}
	}
	file_register(u, f, &fv);   /* full: only the fallback misses it */
	return;
failed:
	u->st.file_failed++;
	file_no_rows(u, f);
}


/*
 * The key /proc/PID/maps gives a file open on fd once it is mapped, where fstat's differs: on
 * overlayfs (Debian's 6.1 and 6.12 in a VM whose root is an overlay: maps 00:1a, fstat 00:1c).
 * Launch mode's held tables were keyed by fstat, so the refresh after the exec did not find
 * them and built them again while the target ran. So: map one page here and read the key
 * /proc/self/maps gives it. 0, or -1 (the key stays fstat's). The kernel-side fallback's own
 * key is a third one there (file_kernel_key).
 */
static int mapped_key(int fd, struct pt_unwind_file_key *k)
{
	struct statfs sf;
	struct pt_maps maps;
	void *p;
	int i, found = -1;

	if (fstatfs(fd, &sf) || (unsigned long)sf.f_type != PT_OVERLAYFS_MAGIC)
		return -1;
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	if (pt_maps_read(getpid(), &maps) == 0) {
		for (i = 0; i < maps.n; i++) {
			if (maps.m[i].start == (uint64_t)(uintptr_t)p && maps.m[i].inode) {
				k->dev = kdev(maps.m[i].dev_major, maps.m[i].dev_minor);
				k->ino = maps.m[i].inode;
				found = 0;
				break;
			}
		}
		pt_maps_free(&maps);
	}
	munmap(p, 4096);
	return found;
}

int pt_unwinder_add_file(struct pt_unwinder *u, const char *path)
{
	struct pt_unwind_file_key k;
	struct uw_file *f;
	struct stat st;
	double t0 = now_ms();
	int fd;

	/* Launch mode's own view of the program and its libraries; still never a FIFO. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	k.dev = kdev(major(st.st_dev), minor(st.st_dev));
	k.ino = st.st_ino;
	mapped_key(fd, &k);
	f = file_find(u, &k);
	if (f && f->state != UW_DEFERRED) {
		close(fd);
		return 0;
	}
	if (!f)
		f = file_new(u, &k);
	if (f)
		file_load(u, f, fd);
	close(fd);
	u->st.build_ms += now_ms() - t0;
	return f ? 0 : -ENOMEM;
}

/* Open the file behind a mapping as the target sees it (target/proc.h): its root when that is
 * still the mapped inode, else map_files (deleted or replaced files); never another inode, whose
 * unwind rows would be wrong. */
static int mapping_open(pid_t pid, const struct pt_mapping *m)
{
	struct pt_mapped mp = { m->path, m->start, m->end, m->inode, m->deleted };
	int fd = pt_mapped_open(pid, &mp, 0, NULL);

	return fd < 0 ? -1 : fd;
}

int pt_unwinder_refresh(struct pt_unwinder *u)
{
	struct pt_maps maps;
	uint32_t n = 0, over = 0;
	double t0 = now_ms();
	int i, err;

	err = pt_maps_read(u->pid, &maps);
	if (err)
		return err;
	for (i = 0; i < maps.n; i++) {
		const struct pt_mapping *m = &maps.m[i];
		struct pt_unwind_file_key k = { kdev(m->dev_major, m->dev_minor), m->inode };
		struct uw_file *f;
		uint64_t bias;

		/* File-backed code only: [vdso] has no file, JIT code no table either way. */
		if (m->perms[2] != 'x' || !m->inode || m->path[0] != '/')
			continue;
		f = file_find(u, &k);
		if (!f || f->state == UW_DEFERRED) {
			int fd = mapping_open(u->pid, m);

			if (!f)
				f = file_new(u, &k);
			if (!f)
				break;
			if (fd < 0) {
				u->st.file_failed++;
				f->state = UW_FAILED;
				file_no_rows(u, f);
			} else
				file_load(u, f, fd);
			if (fd >= 0)
				close(fd);
		}
		if (f->state != UW_LOADED ||
		    pt_unwind_bias(f->loads, f->nloads, m->start, m->pgoff, &bias))
			continue;
		if (n == PT_UNWIND_MAX_MAPS) {
			over++;
			continue;
		}
		u->maps[n].start = m->start;
		u->maps[n].end = m->end;
		u->maps[n].bias = bias;
		u->maps[n].first = f->first;
		u->maps[n].nrows = f->nrows;
		n++;
	}
	pt_maps_free(&maps);
	err = u->sink.publish(u->sink.arg, u->maps, n);
	if (err)
		return err;
	u->st.maps = n;
	u->st.maps_full = over;
	u->st.build_ms += now_ms() - t0;
	return 0;
}

/* ---- BPF maps ------------------------------------------------------------------------------ */

/* Rows copied per batched update: 1024 rows = 8 KiB of values and 4 KiB of keys. */
#define UW_CHUNK 1024

struct bpf_sink {
	int rows_fd, maps_fd, files_fd, errors_fd;
	/* unwind_rows mmapped (BPF_F_MMAPABLE): rows are copied in, no syscall per 1024; NULL
	 * when the mapping failed, and they go by batched updates */
	struct pt_unwind_row *rows;
	size_t rows_len;
	struct pt_unwind_ctl *ctl;      /* in the skeleton's .bss mapping */
	uint32_t half;                  /* published half */
	int key_prog_fd;                /* unw_key_probe, -1 if not loaded */
	__u64 *key_addr;                /* its input and output, in the .bss mapping */
	const struct pt_unwind_file_key *key_out;
	uint32_t keys[UW_CHUNK];
};

/* sink.kernel_key: unw_key_probe run here, in this process's context (bpf_find_vma on our own
 * mm). Test runs of raw tracepoint programs: 5.10+. */
static int bpf_kernel_key(void *arg, uint64_t addr, struct pt_unwind_file_key *k)
{
	struct bpf_sink *s = arg;
	LIBBPF_OPTS(bpf_test_run_opts, o);

	if (s->key_prog_fd < 0)
		return -1;
	*s->key_addr = addr;
	if (bpf_prog_test_run_opts(s->key_prog_fd, &o) || o.retval != 0)
		return -1;
	*k = *s->key_out;
	return 0;
}

/* Array elements [first, first + n): batched (one syscall per chunk), element by element if
 * the kernel has no batch update for arrays (before 5.6). */
static int put_array(struct bpf_sink *s, int fd, uint32_t first, const void *vals, size_t vsz,
		     uint32_t n)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t done = 0, i, cnt;

	while (done < n) {
		cnt = n - done < UW_CHUNK ? n - done : UW_CHUNK;
		for (i = 0; i < cnt; i++)
			s->keys[i] = first + done + i;
		if (bpf_map_update_batch(fd, s->keys, (const char *)vals + done * vsz, &cnt, &opts)) {
			if (errno != EINVAL && errno != ENOTSUP && errno != EOPNOTSUPP)
				return -errno;
			for (i = 0; i < cnt; i++)
				if (bpf_map_update_elem(fd, &s->keys[i], (const char *)vals + (done + i) * vsz, 0))
					return -errno;
		}
		done += cnt;
	}
	return 0;
}

static int bpf_rows(void *arg, uint32_t first, const struct pt_unwind_row *rows, uint32_t n)
{
	struct bpf_sink *s = arg;

	if (!s->rows || ((uint64_t)first + n) * sizeof(*rows) > s->rows_len)
		return put_array(s, s->rows_fd, first, rows, sizeof(*rows), n);
	/* ~100K rows for python3 and its libraries: 0.8 MB copied, where batched updates
	 * took ~10 ms of the command's wait. The rows are new indexes no published mapping
	 * names yet; the fence orders them before the file entry or the publication that
	 * names them (both after this, bpf_file's a syscall, bpf_publish's release stores). */
	memcpy(s->rows + first, rows, (size_t)n * sizeof(*rows));
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return 0;
}

/* unwind_rows into our memory, or NULL (then rows go by syscalls). */
static void map_rows(struct bpf_sink *s, const struct bpf_map *m)
{
	long page = sysconf(_SC_PAGE_SIZE);
	size_t len = (size_t)bpf_map__max_entries(m) * sizeof(struct pt_unwind_row);
	void *p;

	if (!(bpf_map__map_flags(m) & BPF_F_MMAPABLE) || page <= 0)
		return;
	len = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	if (p == MAP_FAILED)
		return;
	s->rows = p;
	s->rows_len = len;
}

static int bpf_file(void *arg, const struct pt_unwind_file_key *k, const struct pt_unwind_file *f)
{
	struct bpf_sink *s = arg;

	return bpf_map_update_elem(s->files_fd, k, f, BPF_ANY) ? -errno : 0;
}

static int bpf_publish(void *arg, const struct pt_unwind_map *maps, uint32_t n)
{
	struct bpf_sink *s = arg;
	uint32_t half = s->half ^ 1;
	int err;

	if (n) {
		err = put_array(s, s->maps_fd, half * PT_UNWIND_MAX_MAPS, maps, sizeof(*maps), n);
		if (err)
			return err;
	}
	/* One store switches half and count together; then a new generation invalidates the
	 * rows the kernel cached (after sel: the walk reads gen first, so with a new
	 * generation it also has the new mappings); then the next walk claims the set for its
	 * address space (bpf/unwind.bpf.h). */
	__atomic_store_n(&s->ctl->sel, ((uint64_t)half << 32) | n, __ATOMIC_RELEASE);
	__atomic_store_n(&s->ctl->gen, s->ctl->gen + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&s->ctl->mm, 0, __ATOMIC_RELEASE);
	s->half = half;
	return 0;
}

static void sink_free(struct bpf_sink *s)
{
	if (s && s->rows)
		munmap(s->rows, s->rows_len);
	free(s);
}

/* The user-space counters live in CPU 0's slot of the per-CPU errors map, so every report
 * shows them with the kernel's own counters. */
static void put_counters(struct bpf_sink *s, const struct pt_unwind_stats *st)
{
	const uint32_t keys[] = { PT_ERR_UNWIND_ROWS_FULL, PT_ERR_UNWIND_MAPS_FULL, PT_ERR_UNWIND_FILE };
	const uint64_t vals[] = { st->rows_full, st->maps_full, st->file_failed };
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *v;
	size_t i;

	if (ncpu <= 0 || !(v = calloc(ncpu, sizeof(*v))))
		return;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v[0] = vals[i];
		bpf_map_update_elem(s->errors_fd, &keys[i], v, 0);
	}
	free(v);
}

void pt_unwind_configure(struct peaktrace_bpf *skel, bool dwarf, uint32_t rows)
{
	if (!rows)
		rows = PT_DEF_UNWIND_ROWS;
	if (rows > PT_UNWIND_MAX_ROWS)
		rows = PT_UNWIND_MAX_ROWS;
	skel->rodata->dwarf_unwind = dwarf;
	/* Off: the walk is dead code to the verifier, and its maps need no memory. */
	bpf_map__set_max_entries(skel->maps.unwind_rows, dwarf ? rows : 1);
	bpf_map__set_max_entries(skel->maps.unwind_maps, dwarf ? 2 * PT_UNWIND_MAX_MAPS : 1);
	bpf_map__set_max_entries(skel->maps.unwind_files, dwarf ? PT_UNWIND_MAX_FILES : 1);
	if (!dwarf)
		bpf_map__set_max_entries(skel->maps.unwind_cache, 1);
}

struct pt_unwinder *pt_unwind_load(struct peaktrace_bpf *skel, pid_t pid, char *const *files,
				   int nfiles, struct pt_uwcache *cache, bool defer)
{
	struct bpf_sink *s;
	struct pt_unwind_sink sink = { .rows = bpf_rows, .file = bpf_file, .publish = bpf_publish,
				       .kernel_key = bpf_kernel_key };
	struct pt_unwinder *u;
	int i, err = 0;

	if (!skel->rodata->dwarf_unwind)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->rows_fd = bpf_map__fd(skel->maps.unwind_rows);
	map_rows(s, skel->maps.unwind_rows);
	s->maps_fd = bpf_map__fd(skel->maps.unwind_maps);
	s->files_fd = bpf_map__fd(skel->maps.unwind_files);
	s->errors_fd = bpf_map__fd(skel->maps.errors);
	s->ctl = &skel->bss->unw_ctl;
	s->key_prog_fd = bpf_program__fd(skel->progs.unw_key_probe);
	s->key_addr = &skel->bss->unw_key_addr;
	s->key_out = &skel->bss->unw_key_out;
	sink.arg = s;
	sink.max_rows = bpf_map__max_entries(skel->maps.unwind_rows);
	u = pt_unwinder_new(pid, &sink);
	if (!u) {
		sink_free(s);
		return NULL;
	}
	u->cache = cache;
	u->defer = defer;
	if (files) {
		/* Launch mode: pid is still our own copy waiting to exec. With defer the command
		 * does not wait for tables to be built: only what the cache has now; the first
		 * refresh after the exec builds the rest while the program runs. */
		u->cache_only = defer;
		for (i = 0; i < nfiles; i++)
			pt_unwinder_add_file(u, files[i]);
		u->cache_only = false;
	} else {
		err = pt_unwinder_refresh(u);
	}
	if (err && err != -ESRCH)
		fprintf(stderr, "peaktrace: warning: cannot load unwind tables of PID %d: %s; stacks "
				"will be unwound with frame pointers\n", pid, strerror(-err));
	put_counters(s, &u->st);
	return u;
}

void pt_unwind_refresh_held(struct pt_unwinder *u)
{
	if (!u)
		return;
	u->cache_only = u->defer;
	pt_unwinder_refresh(u);
	u->cache_only = false;
	put_counters(u->sink.arg, &u->st);
}

void pt_unwind_refresh(struct pt_unwinder *u)
{
	if (!u)
		return;
	/* A failure keeps the last published set: better than none, and the next
	 * refresh tries again. */
	pt_unwinder_refresh(u);
	put_counters(u->sink.arg, &u->st);
}

void pt_unwind_free(struct pt_unwinder *u)
{
	void *s;

	if (!u)
		return;
	s = u->sink.arg;
	pt_unwinder_free(u);
	sink_free(s);
}
