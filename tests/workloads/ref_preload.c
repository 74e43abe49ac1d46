/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ref_preload.so — reference allocation tracer for the test expectations.
 *
 * Not a workload: tests/run.py builds it as a shared object and runs each workload
 * with LD_PRELOAD=ref_preload.so to re-derive, independently of peaktrace and of BPF,
 * the figures written in tests/cases/NAME.json. It logs every outermost allocator call
 * (the same entry points peaktrace probes) as one text line; run.py applies the
 * accounting rules of docs/json-report.md to the log.
 *
 * Log line (written with one write(2) to $REF_PRELOAD_OUT, opened O_APPEND):
 *   FN TID A0 A1 A2 RESULT MODULE OFFSET
 * FN is the entry point, A0..A2 its arguments (unused ones 0), RESULT the returned
 * pointer (posix_memalign: the stored pointer, and A2 = its return code), MODULE and
 * OFFSET locate the return address (the allocation site, like peaktrace's frames[0])
 * as file-relative offset into the ELF object. Numbers are hex without "0x".
 * "mark TID 0 0 0 0 - 0" is logged on the first sigwait() call: in "--wait" mode this is
 * where a workload waits for peaktrace to attach, so run.py can emulate attach mode by
 * ignoring everything logged before it.
 *
 * Why an LD_PRELOAD interposer sees what the uprobes see: glibc calls malloc & co.
 * through its own PLT (strdup -> malloc@plt, reallocarray -> realloc@plt) precisely
 * so that interposition works, and ld.so's calloc (thread DTVs) is looked up by
 * name after startup. Calls between allocator functions are nested: like peaktrace,
 * only the outermost one is logged (see nested()). Known blind spot: glibc's
 * internal direct calls (e.g. tcache_thread_shutdown -> __libc_free at thread exit)
 * bypass the PLT; uprobes see them, this does not — so run.py never uses this log
 * for peaktrace's error counters.
 *
 * One global spinlock covers "real call + log write" so the log order is the true
 * order of the operations across threads (the live-heap peak depends on it).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* glibc's exported implementation names: calling them directly needs no dlsym(), so
 * there is no bootstrap recursion (dlsym itself may call calloc). */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_reallocarray)(void *, size_t, size_t);
static int (*real_sigwait)(const sigset_t *, int *);

/*
 * No thread-local storage here, on purpose: a TLS segment in this object would make
 * every thread's DTV (calloc'ed by ld.so in pthread_create) one slot longer than
 * without the preload, changing the very figures we are checking. "Am I nested in a
 * wrapper?" is instead "does my thread own the lock?" (the lock is held across the
 * whole real call, so nested calls from glibc see their own tid as owner).
 */
static int log_fd = -2;           /* -2: not opened yet, -1: no log wanted */
static int lock_owner;            /* tid holding the lock, 0 if free */
static int marked;

static int my_tid(void)
{
	return (int)syscall(SYS_gettid);
}

static void lock(int tid)
{
	int free_ = 0;
	while (!__atomic_compare_exchange_n(&lock_owner, &free_, tid, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		free_ = 0;
		__builtin_ia32_pause();
	}
}

static void unlock(void)
{
	__atomic_store_n(&lock_owner, 0, __ATOMIC_RELEASE);
}

static int nested(int tid)
{
	return __atomic_load_n(&lock_owner, __ATOMIC_RELAXED) == tid;
}

/* Call with the lock held: allocations made by dlsym are then nested, not logged. */
static void resolve(void)
{
	if (!real_posix_memalign)
		real_posix_memalign = (int (*)(void **, size_t, size_t))dlsym(RTLD_NEXT, "posix_memalign");
	if (!real_aligned_alloc)
		real_aligned_alloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "aligned_alloc");
	if (!real_reallocarray)
		real_reallocarray = (void *(*)(void *, size_t, size_t))dlsym(RTLD_NEXT, "reallocarray");
	if (!real_sigwait)
		real_sigwait = (int (*)(const sigset_t *, int *))dlsym(RTLD_NEXT, "sigwait");
}

__attribute__((constructor)) static void ref_init(void)
{
	int tid = my_tid();
	if (nested(tid))
		return;
	lock(tid);
	resolve();
	unlock();
}

/* Appends s to buf at *pos (no bounds beyond the caller's generous buffer). */
static void put_str(char *buf, size_t *pos, size_t cap, const char *s)
{
	while (*s && *pos + 1 < cap)
		buf[(*pos)++] = *s++;
}

static void put_hex(char *buf, size_t *pos, size_t cap, uint64_t v)
{
	char tmp[17];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v & 0xf];
		v >>= 4;
	} while (v);
	while (n > 0 && *pos + 1 < cap)
		buf[(*pos)++] = tmp[--n];
}

/* Where the allocation site lives; dladdr() does not allocate. */
struct site {
	const char *module;
	uint64_t offset;
};

static void site_of(void *ra, struct site *s)
{
	Dl_info info;
	if (ra && dladdr(ra, &info) && info.dli_fbase) {
		s->module = info.dli_fname && info.dli_fname[0] ? info.dli_fname : "-";
		s->offset = (uint64_t)((uintptr_t)ra - (uintptr_t)info.dli_fbase);
	} else {
		s->module = "-";
		s->offset = (uint64_t)(uintptr_t)ra;
	}
}

/* Called with the lock held. */
static void emit(const char *fn, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t res,
		 const struct site *s)
{
	char buf[4352];
	size_t pos = 0;
	int saved = errno;

	if (log_fd == -2) {
		const char *path = getenv("REF_PRELOAD_OUT");
		log_fd = path ? open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
	}
	if (log_fd < 0)
		goto out;
	put_str(buf, &pos, sizeof(buf), fn);
	put_str(buf, &pos, sizeof(buf), " ");
	put_hex(buf, &pos, sizeof(buf), (uint64_t)my_tid());
	put_str(buf, &pos, sizeof(buf), " ");
	put_hex(buf, &pos, sizeof(buf), a0);
	put_str(buf, &pos, sizeof(buf), " ");
	put_hex(buf, &pos, sizeof(buf), a1);
	put_str(buf, &pos, sizeof(buf), " ");
	put_hex(buf, &pos, sizeof(buf), a2);
	put_str(buf, &pos, sizeof(buf), " ");
	put_hex(buf, &pos, sizeof(buf), res);
	put_str(buf, &pos, sizeof(buf), " ");
	put_str(buf, &pos, sizeof(buf), s->module);
	put_str(buf, &pos, sizeof(buf), " ");
	put_hex(buf, &pos, sizeof(buf), s->offset);
	buf[pos++] = '\n';
	if (write(log_fd, buf, pos) < 0) {
		/* nothing sensible to do: run.py notices a short log */
	}
out:
	errno = saved;  /* the caller's errno must be what the real function left */
}

/*
 * One wrapper shape for every entry point:
 *   nested call  -> real function only;
 *   outermost    -> locate the caller, then under the lock: (lazy dlsym,) real call,
 *                   log line.
 * CALL is the real call; LOG logs it.
 */
#define WRAP(CALL, LOG)                                             \
	do {                                                        \
		int tid_ = my_tid();                                \
		if (nested(tid_)) {                                 \
			resolve();                                  \
			CALL;                                       \
			break;                                      \
		}                                                   \
		struct site s_;                                     \
		site_of(__builtin_return_address(0), &s_);          \
		lock(tid_);                                         \
		resolve();                                          \
		CALL;                                               \
		LOG;                                                \
		unlock();                                           \
	} while (0)

#define U(x) ((uint64_t)(uintptr_t)(x))

void *malloc(size_t n)
{
	void *r;
	WRAP(r = __libc_malloc(n), emit("malloc", n, 0, 0, U(r), &s_));
	return r;
}

void *calloc(size_t n, size_t sz)
{
	void *r;
	WRAP(r = __libc_calloc(n, sz), emit("calloc", n, sz, 0, U(r), &s_));
	return r;
}

void *realloc(void *p, size_t n)
{
	void *r;
	WRAP(r = __libc_realloc(p, n), emit("realloc", U(p), n, 0, U(r), &s_));
	return r;
}

void *reallocarray(void *p, size_t n, size_t sz)
{
	void *r;
	WRAP(r = real_reallocarray(p, n, sz), emit("reallocarray", U(p), n, sz, U(r), &s_));
	return r;
}

void free(void *p)
{
	WRAP(__libc_free(p), emit("free", U(p), 0, 0, 0, &s_));
}

int posix_memalign(void **out, size_t align, size_t n)
{
	int rc;
	WRAP(rc = real_posix_memalign(out, align, n),
	     emit("posix_memalign", align, n, (uint64_t)rc, rc == 0 ? U(*out) : 0, &s_));
	return rc;
}

void *aligned_alloc(size_t align, size_t n)
{
	void *r;
	WRAP(r = real_aligned_alloc(align, n), emit("aligned_alloc", align, n, 0, U(r), &s_));
	return r;
}

void *memalign(size_t align, size_t n)
{
	void *r;
	WRAP(r = __libc_memalign(align, n), emit("memalign", align, n, 0, U(r), &s_));
	return r;
}

void *valloc(size_t n)
{
	void *r;
	WRAP(r = __libc_valloc(n), emit("valloc", n, 0, 0, U(r), &s_));
	return r;
}

void *pvalloc(size_t n)
{
	void *r;
	WRAP(r = __libc_pvalloc(n), emit("pvalloc", n, 0, 0, U(r), &s_));
	return r;
}

/* The first sigwait() marks the attach point of "--wait" mode (see header comment). */
int sigwait(const sigset_t *set, int *sig)
{
	int tid = my_tid();
	if (!nested(tid)) {
		lock(tid);
		resolve();
		if (!marked) {
			struct site s = { "-", 0 };
			marked = 1;
			emit("mark", 0, 0, 0, 0, &s);
		}
		unlock();
	}
	return real_sigwait(set, sig);
}
