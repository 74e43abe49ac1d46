/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * container_target — a target in a container of its own, for tests/sections/security.py.
 *
 * Usage: container_target ROOT    (as root) a new mount namespace whose root is ROOT
 *                                 (bind-mounted, pivot_root, the old root detached: what a
 *                                 container runtime does), then exec /target --in there
 *                                 (ROOT/target is a copy of this program, with the libraries
 *                                 it links copied under ROOT).
 *        /target --in             writes "jit ADDR LEN" (a JIT-like function in anonymous
 *                                 executable memory that calls malloc) and "ready", waits for
 *                                 SIGUSR1, then makes 32 allocations of 1 MiB through that
 *                                 function (kept), writes "done" and exits 0.
 * Inside the container /proc/PID/maps names the files by their container paths, as with
 * Docker: the paths a tracer opens through /proc/PID/root are the container's to choose.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int enter(const char *root)
{
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount(root, root, NULL, MS_BIND | MS_REC, NULL) || chdir(root)) {
		perror("container_target: namespace");
		return 1;
	}
	mkdir("old", 0700);
	if (syscall(SYS_pivot_root, ".", "old") || chdir("/") || umount2("/old", MNT_DETACH)) {
		perror("container_target: pivot_root");
		return 1;
	}
	rmdir("/old");
	execl("/target", "/target", "--in", (char *)NULL);
	perror("container_target: exec /target");
	return 1;
}

typedef void *(*alloc_fn)(size_t);

/* push %rbp; mov %rsp,%rbp; movabs $malloc,%rax; call *%rax; pop %rbp; ret — a frame-pointer
 * frame in memory no file backs, like a JIT's code. */
static alloc_fn make_jit(size_t *len)
{
	uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,
			   0xff, 0xd0, 0x5d, 0xc3 };
	void *(*m)(size_t) = malloc;
	uint8_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	memcpy(code + 6, &m, sizeof(m));
	memcpy(p, code, sizeof(code));
	if (mprotect(p, 4096, PROT_READ | PROT_EXEC))
		return NULL;
	*len = sizeof(code);
	return (alloc_fn)(uintptr_t)p;
}

int main(int argc, char **argv)
{
	static void *keep[32];
	sigset_t set;
	alloc_fn jit;
	size_t len = 0;
	int sig;

	if (argc == 2 && strcmp(argv[1], "--in"))
		return enter(argv[1]);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	jit = make_jit(&len);
	if (!jit)
		return 1;
	printf("jit %lx %zx\nready\n", (unsigned long)(uintptr_t)jit, len);
	fflush(stdout);
	sigwait(&set, &sig);
	for (int i = 0; i < 32; i++)
		keep[i] = jit(1 << 20);
	printf("done %p\n", keep[31]);
	fflush(stdout);
	return 0;
}
