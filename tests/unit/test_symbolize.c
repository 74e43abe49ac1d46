// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_symbolize — symbolize addresses of this very process. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "check.h"
#include "util/elfutil.h"
#include "target/procmaps.h"
#include "symbolize/symbolize.h"

/* noinline + used: keep a real, local symbol with a known body. */
static __attribute__((noinline, used)) int my_test_func(int x)
{
	__asm__ volatile("" ::: "memory");
	return x * 3 + 1;
}

static void test_demangle(void)
{
	char *d;

	d = pt_demangle("_ZN3foo3barEi");
	CHECK_STR(d, "foo::bar(int)", "demangle foo::bar(int)");
	free(d);
	d = pt_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi@@GLIBCXX_3.4");
	CHECK_STR(d, "std::vector<int, std::allocator<int> >::push_back(int const&)@@GLIBCXX_3.4",
		  "demangle keeps a version suffix");
	free(d);
	CHECK(pt_demangle("malloc") == NULL, "plain C name: NULL");
	CHECK(pt_demangle("_Zgarbage!") == NULL, "invalid mangling: NULL");
	CHECK(pt_demangle(NULL) == NULL, "NULL: NULL");
}

static void test_own_functions(struct pt_symbolizer *s)
{
	struct pt_symres r;
	uint64_t fn = (uint64_t)(uintptr_t)&my_test_func;
	void *m = dlsym(RTLD_DEFAULT, "malloc");
	void *f = dlsym(RTLD_DEFAULT, "free");
	struct pt_allocator a;
	int err;

	err = pt_sym_resolve(s, fn + 1, &r);
	CHECK_EQ_U64(err, 0, "own function resolves");
	CHECK_STR(r.func, "my_test_func", "local symbol from .symtab");
	CHECK_EQ_U64(r.func_off, 1, "func_off");
	CHECK(r.module && strstr(r.module, "test_symbolize"), "module is the test binary (%s)",
	      r.module ? r.module : "(null)");
	CHECK(pt_sym_is_code(s, fn), "own function is code");

	err = pt_sym_resolve(s, (uint64_t)(uintptr_t)m, &r);
	CHECK(err == 0 && r.func && strstr(r.func, "malloc"), "libc malloc resolves (%s)",
	      r.func ? r.func : "(null)");
	CHECK_EQ_U64(r.func_off, 0, "malloc func_off 0");
	CHECK(r.module && strstr(r.module, "libc.so"), "malloc is in libc");

	err = pt_sym_resolve(s, (uint64_t)(uintptr_t)f + 5, &r);
	CHECK(err == 0 && r.func && strstr(r.func, "free"), "libc free+5 resolves (%s)",
	      r.func ? r.func : "(null)");
	CHECK_EQ_U64(r.func_off, 5, "free func_off 5");
	/* offset is the ELF vaddr: must equal free's st_value, found independently
	 * through the allocator scan of .dynsym. */
	if (pt_find_allocator(getpid(), &a) == 0) {
		CHECK_EQ_U64(r.offset, a.fn_vaddr[PT_FN_FREE] + 5, "free+5 offset == st_value+5");
		pt_allocator_free(&a);
	}
	CHECK(pt_sym_is_code(s, (uint64_t)(uintptr_t)f), "free is code");
}

static void test_cxx(struct pt_symbolizer *s)
{
	/* std::exception::~exception() from libstdc++, which symbolize.o pulls in. */
	void *p = dlsym(RTLD_DEFAULT, "_ZNSt9exceptionD2Ev");
	struct pt_symres r;

	if (!p) {
		printf("ok - skipped: libstdc++ symbol not found\n");
		return;
	}
	CHECK(pt_sym_resolve(s, (uint64_t)(uintptr_t)p, &r) == 0 && r.func &&
	      strstr(r.func, "std::exception::~exception()"), "C++ symbol demangled (%s)",
	      r.func ? r.func : "(null)");
}

/*
 * Debian's libc is stripped; with libc6-dbg installed its .symtab lives in
 * /usr/lib/debug/.build-id/xx/yyyy.debug. _int_malloc is static: only that file
 * can name it.
 */
static void test_debug_file(struct pt_symbolizer *s)
{
	uint64_t m = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "malloc");
	char dbg[128];
	uint8_t id[64];
	struct pt_elf e;
	struct pt_symres r;
	uint64_t a;
	int i, n, len, found = 0;

	if (pt_elf_open("/lib/x86_64-linux-gnu/libc.so.6", &e) != 0)
		return;
	len = pt_elf_build_id(&e, id, sizeof(id));
	pt_elf_close(&e);
	if (len < 2)
		return;
	n = snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (i = 1; i < len; i++)
		n += snprintf(dbg + n, sizeof(dbg) - n, "%02x", id[i]);
	snprintf(dbg + n, sizeof(dbg) - n, ".debug");
	if (access(dbg, R_OK) != 0) {
		printf("ok - skipped: no debug file %s\n", dbg);
		return;
	}
	for (a = m - 0x10000; a < m + 0x10000 && !found; a += 4)
		if (pt_sym_resolve(s, a, &r) == 0 && r.func && strcmp(r.func, "_int_malloc") == 0)
			found = 1;
	CHECK(found, "static _int_malloc named from the build-id debug file");
}

static void test_non_code(struct pt_symbolizer *s)
{
	struct pt_symres r;
	int local = 0;
	void *anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int err;

	CHECK(!pt_sym_is_code(s, (uint64_t)(uintptr_t)&local), "stack is not code");
	err = pt_sym_resolve(s, 0x10, &r);
	CHECK(err == -ENOENT && r.module == NULL && r.func == NULL, "unmapped address: -ENOENT");
	CHECK(!pt_sym_is_code(s, 0x10), "unmapped is not code");
	if (anon != MAP_FAILED) {
		CHECK_EQ_U64(pt_sym_refresh(s), 0, "refresh");
		err = pt_sym_resolve(s, (uint64_t)(uintptr_t)anon + 8, &r);
		CHECK(err == 0 && r.module && r.module[0] == '\0' && r.func == NULL,
		      "anonymous mapping: module \"\", no func");
		CHECK_EQ_U64(r.offset, 8, "anonymous offset is from mapping start");
		/* (Not malloc'd memory: under valgrind the client heap is rwx.) */
		CHECK(!pt_sym_is_code(s, (uint64_t)(uintptr_t)anon), "rw- mapping is not code");
		munmap(anon, 4096);
	}
	CHECK(pt_sym_resolve(NULL, 1, &r) == -EINVAL, "NULL symbolizer: -EINVAL");
}

/*
 * A library that is deleted from disk and then unmapped must still symbolize:
 * copy libz to a temp file, dlopen it, unlink it, refresh, dlclose, refresh.
 */
static void test_deleted_and_unmapped(struct pt_symbolizer *s)
{
	char dir[] = "/tmp/pt-sym-XXXXXX", path[64], buf[65536];
	int in, out, ok = 1;
	void *h, *fn;
	uint64_t addr;
	struct pt_symres r;
	ssize_t n;

	if (!mkdtemp(dir)) {
		printf("ok - skipped: mkdtemp\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/libptcopy.so", dir);
	in = open("/lib/x86_64-linux-gnu/libz.so.1", O_RDONLY | O_CLOEXEC);
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		ok &= write(out, buf, n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	h = ok && in >= 0 && out >= 0 ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	unlink(path);
	rmdir(dir);
	if (!h) {
		printf("ok - skipped: could not load a copy of libz\n");
		return;
	}
	fn = dlsym(h, "zlibVersion");
	addr = (uint64_t)(uintptr_t)fn;
	CHECK(fn != NULL, "copy loaded");
	CHECK_EQ_U64(pt_sym_refresh(s), 0, "refresh after dlopen + unlink");
	dlclose(h);
	CHECK_EQ_U64(pt_sym_refresh(s), 0, "refresh after dlclose");
	/* First lookup now: symbols come from the fd kept since the first refresh. */
	CHECK(pt_sym_resolve(s, addr, &r) == 0 && r.func && strcmp(r.func, "zlibVersion") == 0,
	      "deleted + unmapped library still symbolizes (%s)", r.func ? r.func : "(null)");
	CHECK_STR(r.module, path, "module path without (deleted)");
	CHECK(pt_sym_is_code(s, addr), "unmapped code still counts as code");
}

/* Another process (a forked child, same layout), which then exits: its stacks
 * must still symbolize from the cache. */
static void test_other_process_exits(void)
{
	uint64_t fn = (uint64_t)(uintptr_t)&my_test_func;
	struct pt_symbolizer *s;
	struct pt_symres r;
	int status, err;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	CHECK(pid > 0, "child forked");
	if (pid <= 0)
		return;
	s = pt_sym_new(pid);
	CHECK(s != NULL, "symbolizer for child");
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	if (!s)
		return;
	err = pt_sym_refresh(s);
	CHECK(err == -ESRCH, "refresh after exit: -ESRCH (%d)", err);
	CHECK(pt_sym_resolve(s, fn + 2, &r) == 0 && r.func && strcmp(r.func, "my_test_func") == 0 &&
	      r.func_off == 2, "exited child still symbolizes (%s)", r.func ? r.func : "(null)");
	CHECK(pt_sym_is_code(s, fn), "exited child: is_code");
	pt_sym_free(s);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 10k addresses spread over libc's text and ours, symbolizer created fresh so
 * loading libc's debug symbols is part of the time. */
static void test_speed(void)
{
	struct pt_symbolizer *s;
	uint64_t base = (uint64_t)(uintptr_t)dlsym(RTLD_DEFAULT, "malloc");
	uint64_t own = (uint64_t)(uintptr_t)&my_test_func;
	struct pt_symres r;
	double t0, dt;
	int i, hits = 0;

	t0 = now();
	s = pt_sym_new(getpid());
	CHECK(s != NULL, "fresh symbolizer");
	if (!s)
		return;
	for (i = 0; i < 10000; i++) {
		uint64_t a = (i & 1) ? base - 0x40000 + (uint64_t)i * 97 : own + (i % 64);

		if (pt_sym_resolve(s, a, &r) == 0 && r.func)
			hits++;
	}
	dt = now() - t0;
	CHECK(hits > 9000, "10k addresses mostly named (%d)", hits);
	CHECK(dt < 1.0, "10k addresses in %.3f s", dt);
	pt_sym_free(s);
}

/* JIT code named by /tmp/perf-PID.map (Node --perf-basic-prof, Python -X perf): an anonymous
 * executable mapping of ours, named by a map file written as those runtimes write it; lines
 * appended later (code recompiled at the same place) win. */
static void test_perf_map(void)
{
	char path[64];
	struct pt_symbolizer *s;
	struct pt_symres r;
	FILE *f;
	char *code = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = (uint64_t)(uintptr_t)code;

	CHECK(code != MAP_FAILED, "anonymous executable mapping for JIT code");
	if (code == MAP_FAILED)
		return;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	f = fopen(path, "w");
	fprintf(f, "%" PRIx64 " 100 JS:*handler /var/task/index.js:3:20\n", base);
	fprintf(f, "%" PRIx64 " 40 LazyCompile:~helper index.js:9\n", base + 0x200);
	fclose(f);
	s = pt_sym_new(getpid());
	CHECK(s && pt_sym_resolve(s, base + 0x10, &r) == 0 && r.func &&
	      strcmp(r.func, "JS:*handler /var/task/index.js:3:20") == 0 && r.func_off == 0x10,
	      "JIT address named from the perf map, with its offset");
	CHECK(s && pt_sym_resolve(s, base + 0x150, &r) == 0 && !r.func, "between JIT symbols: no name");
	/* The runtime recompiles at the same address and appends a line. */
	f = fopen(path, "a");
	fprintf(f, "%" PRIx64 " 100 JS:^handler-v2 index.js:3\n", base);
	fclose(f);
	pt_sym_refresh(s);
	CHECK(s && pt_sym_resolve(s, base + 0x10, &r) == 0 && r.func && strcmp(r.func, "JS:^handler-v2 index.js:3") == 0,
	      "a later line for the same code wins");
	CHECK(s && pt_sym_resolve(s, base + 0x210, &r) == 0 && r.func && strncmp(r.func, "LazyCompile:~helper", 19) == 0,
	      "second JIT symbol");
	/* V8 reuses code space: a newer function compiled over part of helper's range at a lower
	 * start, read in a later refresh. The newest covering line names an address, not the
	 * one with the greatest start (perf's rule). */
	f = fopen(path, "a");
	fprintf(f, "%" PRIx64 " 30 JS:*loadSession /var/task/index.js:12:3\n", base + 0x1f0);
	fclose(f);
	pt_sym_refresh(s);
	CHECK(s && pt_sym_resolve(s, base + 0x210, &r) == 0 && r.func &&
	      strcmp(r.func, "JS:*loadSession /var/task/index.js:12:3") == 0 && r.func_off == 0x20,
	      "reused code space: the newer line with a lower start names an address both cover");
	CHECK(s && pt_sym_resolve(s, base + 0x220, &r) == 0 && r.func &&
	      strncmp(r.func, "LazyCompile:~helper", 19) == 0 && r.func_off == 0x20,
	      "past the newer line, inside the older one: the older line, its own offset");
	CHECK(s && pt_sym_resolve(s, base + 0x1f0, &r) == 0 && r.func &&
	      strncmp(r.func, "JS:*loadSession", 15) == 0 && r.func_off == 0,
	      "inside only the newer line");
	CHECK(s && pt_sym_resolve(s, base + 0x240, &r) == 0 && !r.func, "past both: no name");
	/* The map written anew (a runtime opening it with "w+"): its lines are read from the top
	 * and, newer than all kept, win where they overlap. */
	f = fopen(path, "w");
	fprintf(f, "%" PRIx64 " 8 JS:*fresh\n", base + 0x200);
	fclose(f);
	pt_sym_refresh(s);
	CHECK(s && pt_sym_resolve(s, base + 0x204, &r) == 0 && r.func && strcmp(r.func, "JS:*fresh") == 0,
	      "a map written anew is read from its start");
	CHECK(s && pt_sym_resolve(s, base + 0x1f0, &r) == 0 && r.func &&
	      strncmp(r.func, "JS:*loadSession", 15) == 0, "the lines read before it still name the rest");
	pt_sym_free(s);
	unlink(path);
	munmap(code, 8192);
}

int main(void)
{
	struct pt_symbolizer *s;

	test_demangle();
	CHECK(pt_sym_new(1 << 30) == NULL && errno == ESRCH, "nonexistent pid: NULL, ESRCH");
	s = pt_sym_new(getpid());
	CHECK(s != NULL, "symbolizer for own pid");
	if (!s)
		return CHECK_DONE();
	test_own_functions(s);
	test_cxx(s);
	test_debug_file(s);
	test_non_code(s);
	test_deleted_and_unmapped(s);
	pt_sym_free(s);
	test_other_process_exits();
	test_speed();
	test_perf_map();
	return CHECK_DONE();
}
