// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Unit tests for user/rss/rsskind.c: the memory kind of addresses in this very process, whose
 * memory the test made itself (a 64 MiB malloc is an mmapped chunk, a small one on the main
 * thread is in [heap], on another thread in a thread arena's heap; a thread's local variable is
 * on its stack; an mmap is anonymous; a global is a private copy of the executable's .bss). */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "check.h"
#include "tests/unit/memkind.h"
#include "tests/unit/mergedheap.h"
#include "bpf/peaktrace.h"

static char global_buf[1 << 16];

struct seen {
	uint64_t local, small;
};

static void *thread_fn(void *arg)
{
	struct seen *s = arg;
	volatile char local[4096];
	char *p = malloc(100);

	local[0] = 1;
	s->local = (uint64_t)(uintptr_t)&local[0];
	s->small = (uint64_t)(uintptr_t)p;
	return p;
}

static enum pt_mem_kind kind_of(int fd, uint64_t addr, uint64_t sp)
{
	bool capped;
	enum pt_mem_kind r = kind_here(fd, addr, sp, &capped);

	return capped ? PT_MK_COUNT : r;
}

/* The maps kept while a target runs (pt_rss_kinds_keep, here of this process), told against
 * alone as when the target is gone: nothing read of its memory then. */
static void kept_checks(char *big, char *small, char *anon, const struct seen *th, uint64_t sp)
{
	struct pt_rss_kinds k = { 0 };
	char *later, *unmapped = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK_EQ_U64(pt_rss_kind_kept(&k, (uint64_t)(uintptr_t)small, sp), PT_MK_UNKNOWN,
		     "kept: none kept yet, not known");
	pt_rss_kinds_keep(&k, getpid(), 1, PT_KIND_KEEP_NS);
	CHECK(k.kept && k.kept->n > 0 && k.kept_reads == 1 && k.kept_gen == 1, "kept: this process's maps kept");
	pt_rss_kinds_keep(&k, getpid(), 1, 10 * PT_KIND_KEEP_NS);
	CHECK_EQ_U64(k.kept_reads, 1, "kept: not read again while the mappings' generation is the same");
	pt_rss_kinds_keep(&k, getpid(), 2, k.kept_ns + PT_KIND_KEEP_NS / 2);
	CHECK_EQ_U64(k.kept_reads, 1, "kept: nor within PT_KIND_KEEP_NS of the last read");
	/* After the keep: a new mapping, and one unmapped. */
	later = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(unmapped, 1 << 20);
	CHECK_EQ_U64(pt_rss_kind_kept(&k, th->small, th->local), PT_MK_HEAP_ARENA,
		     "kept: a thread's small malloc: its arena's heap, told when the maps were kept");
	CHECK_EQ_U64(pt_rss_kind_kept(&k, (uint64_t)(uintptr_t)small, sp), PT_MK_HEAP_MAIN,
		     "kept: [heap]");
	CHECK_EQ_U64(pt_rss_kind_kept(&k, th->local, th->local), PT_MK_THREAD_STACK,
		     "kept: a thread's local with its sp: thread stack");
	CHECK_EQ_U64(pt_rss_kind_kept(&k, (uint64_t)(uintptr_t)big + (63 << 20), sp), PT_MK_ANON,
		     "kept: no chunk claimed without reading (the looks while it ran tell those)");
	CHECK_EQ_U64(pt_rss_kind_kept(&k, (uint64_t)(uintptr_t)anon, sp), PT_MK_ANON, "kept: anonymous mmap");
	CHECK_EQ_U64(pt_rss_kind_kept(&k, (uint64_t)(uintptr_t)unmapped + 4096, sp), PT_MK_ANON,
		     "kept: unmapped after the keep: where it was when kept");
	if (later != MAP_FAILED && (uint64_t)(uintptr_t)later != (uint64_t)(uintptr_t)unmapped)
		CHECK_EQ_U64(pt_rss_kind_kept(&k, (uint64_t)(uintptr_t)later + 4096, sp), PT_MK_UNKNOWN,
			     "kept: mapped after the keep: not known (not unmapped by the end)");
	munmap(later, 1 << 20);
	pt_rss_kinds_free(&k);
}

/* A thread arena's two heaps, the first merged with a mapping just below it (mergedheap.h):
 * told by the heap_info at the 64 MiB boundary below the address, not by the mapping's start;
 * the merged mapping below is not the heap. The same against the maps kept. */
static void merged_heap_checks(int fd, uint64_t sp)
{
	struct merged_heap mh = { 0 };
	struct pt_rss_kinds k = { 0 };

	CHECK(merged_heap_make(&mh) == 0, "merged: setup (two heaps, a mapping just below the first)");
	CHECK(mh.merged, "merged: the kernel made the mapping below and the heap one mapping");
	CHECK_EQ_U64(kind_of(fd, mh.small, sp), PT_MK_HEAP_ARENA,
		     "merged: a small block in a heap merged with the mapping below: thread arena");
	CHECK_EQ_U64(kind_of(fd, mh.below + 4096, sp), PT_MK_ANON,
		     "merged: the mapping below, in the same line of the maps: anonymous mmap");
	CHECK_EQ_U64(kind_of(fd, mh.last, sp), PT_MK_HEAP_ARENA,
		     "merged: a block in the arena's second heap (heap_info.prev set): thread arena");
	pt_rss_kinds_keep(&k, getpid(), 1, PT_KIND_KEEP_NS);
	CHECK_EQ_U64(pt_rss_kind_kept(&k, mh.small, sp), PT_MK_HEAP_ARENA, "merged: kept: the first heap");
	CHECK_EQ_U64(pt_rss_kind_kept(&k, mh.below + 4096, sp), PT_MK_ANON, "merged: kept: the mapping below");
	CHECK_EQ_U64(pt_rss_kind_kept(&k, mh.last, sp), PT_MK_HEAP_ARENA, "merged: kept: the second heap");
	/* Kept again, the mappings the same: the boundaries are not read again (a read racing
	 * with the target's DONTNEED would fault a page back in). The heap_info's size word
	 * zeroed meanwhile (restored after; the arena is idle: its thread has exited) would
	 * read as no heap. */
	{
		volatile uint64_t *hi = (volatile uint64_t *)(uintptr_t)mh.h2;
		uint64_t size = hi[2];

		hi[2] = 0;
		pt_rss_kinds_keep(&k, getpid(), 2, k.kept_ns + 2 * PT_KIND_KEEP_NS);
		hi[2] = size;
	}
	CHECK_EQ_U64(k.kept_reads, 2, "merged: kept again (a new generation)");
	CHECK_EQ_U64(pt_rss_kind_kept(&k, mh.last, sp), PT_MK_HEAP_ARENA,
		     "merged: kept again: the second heap's verdict stands, its boundary not read again");
	pt_rss_kinds_free(&k);
}

/* The kinds told at the end against the maps kept while a target ran (it has exited, as when
 * attached): a child holding a 64 MiB malloc and three anonymous mmaps, two written whole, one
 * only in the middle of each page; while it lives, a look at the chunk's fault and at two
 * mmaps' (pt_rss_kinds_early); then it exits. Four stacks, their last faults there (a real BPF
 * array map of pt_stack_stats, as the kernel's): the chunk is a malloc chunk, the written mmap
 * looked at is anonymous; the mmap never looked at is not known (its maps alone cannot tell a
 * heap), and so is the one whose page starts with zeros (as a heap whose header was not
 * written yet when looked at); both counted in kept_unlooked. */
static void capture_kept_checks(void)
{
	struct pt_rss_kinds k = { 0 };
	struct pt_stack_stats st[4];
	/* the chunk, the mmap looked at, the mmap never looked at, the one with zeroed page starts */
	uint64_t a[4];
	int go[2], addrs[2], map_fd, status;
	uint32_t i;
	pid_t pid;

	CHECK(pipe(go) == 0 && pipe(addrs) == 0, "capture: pipes");
	pid = fork();
	if (pid == 0) {
		char *big = malloc(64 << 20);
		char *m1 = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *m2 = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *m3 = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t w[4] = { (uint64_t)(uintptr_t)big, (uint64_t)(uintptr_t)m1, (uint64_t)(uintptr_t)m2,
				  (uint64_t)(uintptr_t)m3 };
		char c;

		close(go[1]);   /* its read ends when the parent closes its end */
		if (!big || m1 == MAP_FAILED || m2 == MAP_FAILED || m3 == MAP_FAILED)
			_exit(1);
		memset(big, 1, 64 << 20);
		memset(m1, 1, 4 << 20);
		memset(m2, 1, 4 << 20);
		for (size_t o = 2048; o < (4 << 20); o += 4096)
			m3[o] = 1;
		if (write(addrs[1], w, sizeof(w)) != sizeof(w) || read(go[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	CHECK(pid > 0 && read(addrs[0], a, sizeof(a)) == sizeof(a), "capture: the child's regions");
	if (pid <= 0)
		return;
	pt_rss_kinds_queue(&k, 0, a[0] + (63 << 20), 0);
	pt_rss_kinds_queue(&k, 1, a[1] + 4096, 0);
	pt_rss_kinds_queue(&k, 3, a[3] + 4096 + 2048, 0);
	pt_rss_kinds_early(&k, pid, 0);
	CHECK(k.kept && k.kept->n > 0 && k.nqueued == 0 && k.early_dropped == 0,
	      "capture: the faults looked at while it ran, its maps kept");
	close(go[1]);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "capture: the child ran and exited");
	map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(uint32_t), sizeof(st[0]), 4, NULL);
	if (map_fd < 0) {
		printf("skip: capture: no BPF array map (%s): the kept-maps capture is not checked\n",
		       strerror(errno));
		pt_rss_kinds_free(&k);
		return;
	}
	memset(st, 0, sizeof(st));
	st[0].rss_addr = a[0] + (63 << 20);
	st[1].rss_addr = a[1] + 4096;
	st[2].rss_addr = a[2] + 4096;
	st[3].rss_addr = a[3] + 4096 + 2048;
	for (i = 0; i < 4; i++) {
		st[i].rss_now = 4096;
		st[i].rss_sp = 1;   /* in no mapping: not a stack */
		CHECK(bpf_map_update_elem(map_fd, &i, &st[i], 0) == 0, "capture: stats map entry");
	}
	CHECK_EQ_U64(pt_rss_kinds_capture(&k, pid, map_fd, 4), 0, "capture: told against the kept maps");
	CHECK(k.from_kept, "capture: from the maps kept while it ran (it is gone)");
	CHECK_EQ_U64(pt_rss_kind_of_stack(&k, 0), PT_MK_HEAP_MMAPPED,
		     "capture: the 64 MiB malloc looked at: malloc heap, mmapped chunk");
	CHECK_EQ_U64(pt_rss_kind_of_stack(&k, 1), PT_MK_ANON,
		     "capture: an mmap looked at, no heap header: anonymous mmap");
	CHECK_EQ_U64(pt_rss_kind_of_stack(&k, 2), PT_MK_UNKNOWN,
		     "capture: an mmap never looked at: not known, not guessed anonymous");
	CHECK_EQ_U64(pt_rss_kind_of_stack(&k, 3), PT_MK_UNKNOWN,
		     "capture: an mmap looked at whose page starts with zeros: not known (a header may follow)");
	CHECK_EQ_U64(k.kept_unlooked, 2, "capture: those two stacks are counted");
	close(map_fd);
	pt_rss_kinds_free(&k);
}

int main(void)
{
	int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	char *big = malloc(64 << 20), *small = malloc(100), *gone;
	char *anon = mmap(NULL, 4 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile char here = 0;
	uint64_t sp = (uint64_t)(uintptr_t)&here;
	struct seen th = { 0 };
	pthread_t t;
	void *ret;

	CHECK(fd >= 0 && big && small && anon != MAP_FAILED, "setup");
	/* First, while no thread arena exists: glibc places the first one's heap at the top of a
	 * free range (the 64 MiB below it unmapped again), later ones right above the last
	 * heap's 64 MiB, where the mapping below is that heap's. */
	merged_heap_checks(fd, sp);
	memset(big, 1, 64 << 20);
	memset(anon, 1, 4 << 20);
	global_buf[100] = 1;
	CHECK(pthread_create(&t, NULL, thread_fn, &th) == 0, "thread");
	/* The thread stays joinable, its stack still mapped (glibc keeps it until the join). */
	usleep(100000);
	CHECK_EQ_U64(kind_of(fd, (uint64_t)(uintptr_t)big + (63 << 20), sp), PT_MK_HEAP_MMAPPED,
		     "a 64 MiB malloc's last MiB: malloc heap, mmapped chunk (header 63 MiB below)");
	CHECK_EQ_U64(kind_of(fd, (uint64_t)(uintptr_t)small, sp), PT_MK_HEAP_MAIN,
		     "a small malloc on the main thread: [heap], the main arena");
	CHECK_EQ_U64(kind_of(fd, th.small, th.local), PT_MK_HEAP_ARENA,
		     "a small malloc on a thread: its thread arena's heap");
	CHECK_EQ_U64(kind_of(fd, th.local, th.local), PT_MK_THREAD_STACK,
		     "a thread's local variable with its sp: thread stack");
	CHECK_EQ_U64(kind_of(fd, th.local, sp), PT_MK_ANON,
		     "the same address faulted from another thread's sp: anonymous mmap");
	CHECK_EQ_U64(kind_of(fd, sp, sp), PT_MK_MAIN_STACK, "the main thread's local: [stack]");
	CHECK_EQ_U64(kind_of(fd, (uint64_t)(uintptr_t)anon + (3 << 20), sp), PT_MK_ANON,
		     "an anonymous mmap written from its start (no chunk header): anonymous mmap");
	CHECK_EQ_U64(kind_of(fd, (uint64_t)(uintptr_t)&global_buf[100], sp), PT_MK_FILE_PRIVATE,
		     "a written global: private copy of the executable's mapping");
	CHECK_EQ_U64(kind_of(-1, (uint64_t)(uintptr_t)big + (63 << 20), sp), PT_MK_ANON,
		     "without the target's memory no chunk is claimed");
	gone = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(gone, 1 << 20);
	CHECK_EQ_U64(kind_of(fd, (uint64_t)(uintptr_t)gone + 4096, sp), PT_MK_GONE,
		     "an unmapped address: unmapped by the end");
	CHECK_EQ_U64(kind_of(fd, 0, sp), PT_MK_UNKNOWN, "no address: not known");
	kept_checks(big, small, anon, &th, sp);
	capture_kept_checks();
	pthread_join(t, &ret);
	free(ret);
	close(fd);
	return CHECK_DONE();
}
