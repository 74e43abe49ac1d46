/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * proc.h — what peaktrace reads of the target through /proc: one reader each for environ,
 * status fields and comm, the target's view of a path, and the file behind a mapping.
 * (/proc/PID/maps itself is parsed in target/procmaps.c.)
 */
#ifndef PEAKTRACE_TARGET_PROC_H
#define PEAKTRACE_TARGET_PROC_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/stat.h>

/* The most read of any /proc/PID file that holds a list (environ, smaps): far above what a
 * real process has (environ is bounded by the exec's argument limit), low enough to stay sane. */
#define PT_PROC_READ_MAX (256u << 20)

/* /proc/PID/NAME (NAME "environ", "smaps", ...) read whole, up to PT_PROC_READ_MAX bytes:
 * pt_read_file's contract. */
char *pt_proc_read(pid_t pid, const char *name, size_t *len);

/* A process environment as the kernel keeps it: NAME=VALUE entries, each NUL-terminated. */
struct pt_environ {
	char *buf;
	size_t len;
};

/* The target's environment as it was at exec (/proc/PID/environ). 0 or -errno; an empty
 * environment is 0 with len 0. Free with pt_environ_free. */
int pt_environ_read(pid_t pid, struct pt_environ *e);
void pt_environ_free(struct pt_environ *e);
/* Entries in order: first with prev NULL, then the one after prev; NULL after the last. An
 * unterminated last entry (a truncated read) is not returned. */
const char *pt_environ_next(const struct pt_environ *e, const char *prev);
/* The value of the first NAME=... entry, or NULL. */
const char *pt_environ_get(const struct pt_environ *e, const char *name);

/* The text after "Field:" of the status line named field (leading blanks skipped, newline cut)
 * into buf: 0, or -ENOENT (no such field) or -errno (unreadable). */
int pt_proc_status_field(pid_t pid, const char *field, char *buf, size_t len);
/* A "Field:   N kB" line of /proc/PID/status in bytes (VmRSS, VmHWM, ...); 0 if unreadable. */
uint64_t pt_proc_status_bytes(pid_t pid, const char *field);
/* VmHWM: the process's resident high-water mark, in bytes (0 if unreadable). */
uint64_t pt_proc_vmhwm(pid_t pid);
/* /proc/PID/exe's target, the executable's path (buf left as it is if unreadable). */
void pt_proc_exe(pid_t pid, char *buf, size_t len);
/* /proc/PID/comm without its newline ("" if unreadable). */
void pt_proc_comm(pid_t pid, char *buf, size_t len);

/* Path through which the target's file can be opened from our mount namespace:
 * "/proc/PID/root" + path (path itself when pid <= 0). Caller frees. For messages and tests:
 * opening it follows the target's symlinks from *our* root (an absolute one lands on a host
 * file), so every open of a target's file goes through pt_target_open or pt_mapped_open. */
char *pt_target_path(pid_t pid, const char *path);

/* The target's root directory (/proc/PID/root; ours, "/", for pid <= 0), an O_PATH fd: the fd
 * or -ESRCH (the target is gone) or -errno. */
int pt_target_root_open(pid_t pid);
/* /proc/PID/mem opened read-only (O_CLOEXEC): the one opener of a target's memory, for every
 * reader of it (CPython's frames, arenas, pools, RSS kinds). The fd, or -1 with errno set. */
int pt_proc_mem_open(pid_t pid);

/* /proc/PID/pagemap: the page is present (bit 63 of its 64-bit entry). */
#define PT_PAGEMAP_PRESENT (1ull << 63)

/* Whether the page holding addr is present in the address space whose pagemap is pm_fd. Read
 * before reading a target's page that it may never have touched: a read fault maps the zero page
 * on most kernels, but some allocate a real one (a 6.18 guest here: RssAnon +4 KiB a page read),
 * which grows the target's RSS and steals the fault its own first write would have made. */
bool pt_page_resident(int pm_fd, uint64_t addr);

/* What /proc/PID/stat says of pid before it is traced: 0 (a process), -ESRCH (none),
 * -EINVAL (a kernel thread: no user-space heap) or -ENOTDIR (a thread, not a process). */
int pt_proc_check_process(pid_t pid);
/* The process's user and system CPU time so far (/proc/PID/stat utime, stime: all its threads,
 * the dead ones too), in ns. False if unread. */
bool pt_proc_cpu_ns(pid_t pid, uint64_t *user, uint64_t *sys);
/* Bytes of /proc/meminfo's MemTotal, 0 if unread. */
uint64_t pt_mem_total(void);

/* 1 if the target's root is ours (same dev and inode; always for pid <= 0), else 0. */
int pt_target_same_root(pid_t pid);

/* pt_open_in_root flags: resolve by the component walk even where openat2 exists (tests). */
#define PT_OPEN_WALK 1u

/*
 * Opens path (absolute or not: relative to the root either way) inside the directory rootfd
 * as if rootfd were "/": openat2 with RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, so absolute
 * symlinks and ".." stay inside and /proc magic links are refused (-ELOOP); without openat2
 * (ENOSYS), the same resolution by an O_NOFOLLOW walk of the components. O_RDONLY | O_CLOEXEC |
 * O_NONBLOCK | O_NOCTTY; only a regular file is returned (else -EINVAL; a FIFO never blocks),
 * and with max_size (0: none) only one of at most max_size bytes (else -EFBIG). The fd, or
 * -errno.
 */
int pt_open_in_root(int rootfd, const char *path, size_t max_size, unsigned flags);
/* pt_open_in_root in the target's root (pt_target_root_open): the one way to open a file the
 * target names. -ESRCH when the target (its root) is gone. */
int pt_target_open(pid_t pid, const char *path, size_t max_size);

/* The file a mapping maps, as the kernel's maps line names it. */
struct pt_mapped {
	const char *path;       /* as in maps, without " (deleted)" */
	uint64_t start, end;    /* some mapping of it in the target (for map_files) */
	uint64_t inode;         /* the mapped inode */
	bool deleted;           /* maps said "(deleted)": the path names another file, or none */
};

/* With pt_mapped_open: rather a regular file at the mapped path (inside the target's root) that
 * is another inode (a library upgraded on disk; overlayfs, whose stat can show another inode
 * number than maps) than nothing. Never for a deleted mapping. */
#define PT_MAPPED_ANY_INODE 1u
/* With pt_mapped_open: the target's root was ours (pt_target_same_root, asked while it lived),
 * so once it is gone our own view of the path is its view. Without it nothing is opened outside
 * the target's root: a container's path resolved from our root is a host file. */
#define PT_MAPPED_SAME_ROOT 2u

/*
 * Opens the file behind a mapping of pid, read-only, one way for every caller:
 *   1. the path inside the target's root (pt_target_open: its symlinks cannot leave it), when
 *      that is still the mapped inode;
 *   2. /proc/PID/map_files/START-END, which names the mapped inode exactly (deleted or replaced
 *      files, overlayfs, a path swapped for a symlink);
 *   3. with PT_MAPPED_SAME_ROOT, our own view of the path when it is the mapped inode (a target
 *      that has exited: its root and map_files are gone);
 *   4. with PT_MAPPED_ANY_INODE, a regular file at the path inside the target's root, then (with
 *      PT_MAPPED_SAME_ROOT) in ours.
 * pid <= 0 means our own root (steps 1 and 4 only). Only regular files are opened (O_NONBLOCK:
 * a FIFO planted at the path never blocks us). Returns the fd (caller closes) or -errno;
 * *opened (may be NULL) gets a malloc'd path that names the opened inode without resolving the
 * target's path again: "/proc/self/fd/N" (valid while the fd is open) or the map_files link. It
 * is the one to attach uprobes by.
 */
int pt_mapped_open(pid_t pid, const struct pt_mapped *m, unsigned flags, char **opened);

/* The initial PID namespace's inode (PROC_PID_INIT_INO in the kernel's proc_ns.h): the one whose
 * ids the BPF helpers return. */
#define PT_PID_INIT_INO 0xEFFFFFFCULL

/* stat() of pid's PID namespace (/proc/PID/ns/pid; pid 0: peaktrace's own). Returns 0 or -errno. */
int pt_proc_pidns(pid_t pid, struct stat *st);

#endif
