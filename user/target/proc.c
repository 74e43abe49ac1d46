// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* proc.c — what peaktrace reads of the target through /proc (see proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <unistd.h>
#include "util/file.h"
#include "target/proc.h"

char *pt_proc_read(pid_t pid, const char *name, size_t *len)
{
	char path[96];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	return pt_read_file(path, PT_PROC_READ_MAX, len);
}

/* ---- environ ------------------------------------------------------------------------------ */

int pt_environ_read(pid_t pid, struct pt_environ *e)
{
	e->buf = pt_proc_read(pid, "environ", &e->len);
	if (!e->buf) {
		e->len = 0;
		return -errno;
	}
	return 0;
}

void pt_environ_free(struct pt_environ *e)
{
	free(e->buf);
	e->buf = NULL;
	e->len = 0;
}

const char *pt_environ_next(const struct pt_environ *e, const char *prev)
{
	const char *p = prev ? prev + strlen(prev) + 1 : e->buf;
	const char *end = e->buf + e->len;

	if (!e->buf || p >= end)
		return NULL;
	/* The buffer is NUL-terminated past len, so strlen stops; an entry running into that
	 * terminator was cut by the read. */
	if (!memchr(p, 0, (size_t)(end - p)))
		return NULL;
	return p;
}

const char *pt_environ_get(const struct pt_environ *e, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = pt_environ_next(e, NULL); p; p = pt_environ_next(e, p))
		if (!strncmp(p, name, n) && p[n] == '=')
			return p + n + 1;
	return NULL;
}

/* ---- status, comm ------------------------------------------------------------------------- */

int pt_proc_status_field(pid_t pid, const char *field, char *buf, size_t len)
{
	char path[64], line[512];
	size_t n = strlen(field);
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		const char *v = line + n + 1;

		if (strncmp(line, field, n) || line[n] != ':')
			continue;
		v += strspn(v, " \t");
		snprintf(buf, len, "%.*s", (int)strcspn(v, "\n"), v);
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

uint64_t pt_proc_status_bytes(pid_t pid, const char *field)
{
	unsigned long long kb = 0;
	char v[64];

	if (pt_proc_status_field(pid, field, v, sizeof(v)) || sscanf(v, "%llu", &kb) != 1)
		return 0;
	return (uint64_t)kb * 1024;
}

int pt_proc_mem_open(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

#define PF_KTHREAD 0x00200000

int pt_proc_check_process(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long flags = 0;
	int fd, i;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = 0;
	/* Field 9 (flags) counted after the ")" that ends comm, which may contain spaces. */
	p = strrchr(buf, ')');
	for (i = 0; p && i < 7; i++)
		p = strchr(p + 1, ' ');
	if (p)
		flags = strtoul(p + 1, NULL, 10);
	if (flags & PF_KTHREAD)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, pid);
	if (access(path, F_OK))
		return -ENOTDIR;
	return 0;
}

bool pt_proc_cpu_ns(pid_t pid, uint64_t *user, uint64_t *sys)
{
	unsigned long long ut, st;
	char path[64], buf[1024], *p;
	long tck = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || tck <= 0)
		return false;
	buf[n] = 0;
	/* After the command name, which may hold anything: fields 3.. (state first). */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return false;
	*user = ut * (1000000000ull / (unsigned long long)tck);
	*sys = st * (1000000000ull / (unsigned long long)tck);
	return true;
}

uint64_t pt_mem_total(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

uint64_t pt_proc_vmhwm(pid_t pid)
{
	return pt_proc_status_bytes(pid, "VmHWM");
}

void pt_proc_exe(pid_t pid, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, buf, len - 1);
	if (n > 0)
		buf[n] = 0;
}

void pt_proc_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (f && fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	if (f)
		fclose(f);
}

/* ---- files -------------------------------------------------------------------------------- */

char *pt_target_path(pid_t pid, const char *path)
{
	char *s;

	if (!path)
		return NULL;
	if (pid <= 0)
		return strdup(path);
	if (asprintf(&s, "/proc/%d/root%s%s", (int)pid, path[0] == '/' ? "" : "/", path) < 0)
		return NULL;
	return s;
}

/* ---- a file of the target, opened inside its root ----------------------------------------- */

int pt_target_root_open(pid_t pid)
{
	char path[64];
	int fd;

	if (pid <= 0)
		snprintf(path, sizeof(path), "/");
	else
		snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}

int pt_target_same_root(pid_t pid)
{
	char path[64];
	struct stat a, b;

	if (pid <= 0)
		return 1;
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	if (stat(path, &a) || stat("/", &b))
		return 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

#define OPEN_FLAGS (O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

static int openat2_in_root(int rootfd, const char *path)
{
	struct open_how how = {
		.flags = OPEN_FLAGS,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	do
		fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	while (fd < 0 && (errno == EAGAIN || errno == EINTR));	/* EAGAIN: a rename raced */
	return fd < 0 ? -errno : (int)fd;
}

/* The walk's state: a stack of directory fds from the root (stack[0], not ours to close) down
 * to the current directory, so ".." never climbs above the root. */
#define WALK_DEPTH 128
#define WALK_LINKS 40	/* the kernel's MAXSYMLINKS */

struct walk {
	int stack[WALK_DEPTH];
	int depth;
};

static void walk_pop_to(struct walk *w, int depth)
{
	while (w->depth > depth)
		close(w->stack[w->depth--]);
}

/* rest := link + "/" + after (after may be empty). */
static int walk_splice(char **rest, const char *link, const char *after)
{
	char *n;

	if (asprintf(&n, "%s/%s", link, after) < 0)
		return -ENOMEM;
	free(*rest);
	*rest = n;
	return 0;
}

/*
 * RESOLVE_IN_ROOT by hand, for kernels without openat2 (before 5.6): one component at a time,
 * each opened O_NOFOLLOW from the directory before it; a symlink is read and its text resolved
 * from the root (absolute) or from where it sits (relative), like the kernel does inside a
 * chroot; ".." at the root stays at the root. A magic link (/proc/PID/fd/N) is a symlink whose
 * text is a path: that path, too, is resolved inside the root, so it cannot jump out.
 */
static int walk_in_root(int rootfd, const char *path)
{
	struct walk w = { .stack = { rootfd }, .depth = 0 };
	char *rest = strdup(path), *p, link[PATH_MAX];
	int links = 0, fd = -ENOENT;

	if (!rest)
		return -ENOMEM;
	p = rest;
	for (;;) {
		char *comp, *after;
		bool last;
		ssize_t n;

		p += strspn(p, "/");
		if (!*p) {
			fd = -EISDIR;	/* the path names a directory */
			break;
		}
		comp = p;
		after = p + strcspn(p, "/");
		last = !after[strspn(after, "/")];
		if (*after)
			*after++ = 0;
		p = after;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			walk_pop_to(&w, w.depth ? w.depth - 1 : 0);
			continue;
		}
		n = readlinkat(w.stack[w.depth], comp, link, sizeof(link) - 1);
		if (n >= 0) {
			link[n] = 0;
			if (++links > WALK_LINKS) {
				fd = -ELOOP;
				break;
			}
			if (link[0] == '/')
				walk_pop_to(&w, 0);
			if ((fd = walk_splice(&rest, link, after)) < 0)
				break;
			p = rest;
			continue;
		}
		if (errno != EINVAL) {	/* EINVAL: there, and not a symlink */
			fd = -errno;
			break;
		}
		/* O_NOFOLLOW: a symlink swapped in since readlinkat fails here (ELOOP, ENOTDIR). */
		if (last) {
			fd = openat(w.stack[w.depth], comp, OPEN_FLAGS | O_NOFOLLOW);
			fd = fd < 0 ? -errno : fd;
			break;
		}
		if (w.depth + 1 >= WALK_DEPTH) {
			fd = -ENAMETOOLONG;
			break;
		}
		fd = openat(w.stack[w.depth], comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			fd = -errno;
			break;
		}
		w.stack[++w.depth] = fd;
	}
	walk_pop_to(&w, 0);
	free(rest);
	return fd;
}

int pt_open_in_root(int rootfd, const char *path, size_t max_size, unsigned flags)
{
	struct stat st;
	int fd = -ENOSYS;

	if (!path || !*path)
		return -ENOENT;
	if (!(flags & PT_OPEN_WALK))
		fd = openat2_in_root(rootfd, path);
	if (fd == -ENOSYS)
		fd = walk_in_root(rootfd, path);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;		/* FIFOs, devices, sockets, directories: never read */
	}
	if (max_size && (uint64_t)st.st_size > max_size) {
		close(fd);
		return -EFBIG;
	}
	return fd;
}

int pt_target_open(pid_t pid, const char *path, size_t max_size)
{
	int root = pt_target_root_open(pid), fd;

	if (root < 0)
		return root;
	fd = pt_open_in_root(root, path, max_size, 0);
	close(root);
	return fd;
}

/* ---- the file behind a mapping ------------------------------------------------------------ */

/* fd's inode is want_inode (0: any). Closes fd and returns -ENOENT when not. */
static int keep_inode(int fd, uint64_t want_inode, char **opened, const char *name)
{
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (want_inode && (uint64_t)st.st_ino != want_inode)) {
		close(fd);
		return -ENOENT;
	}
	if (opened) {
		char self[32];

		if (!name) {
			snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
			name = self;
		}
		if (!(*opened = strdup(name))) {
			close(fd);
			return -ENOMEM;
		}
	}
	return fd;
}

int pt_mapped_open(pid_t pid, const struct pt_mapped *m, unsigned flags, char **opened)
{
	bool own_view = pid > 0 && (flags & PT_MAPPED_SAME_ROOT);
	char mf[96];
	int fd = -ENOENT;

	if (opened)
		*opened = NULL;
	if (!m->deleted)
		fd = keep_inode(pt_target_open(pid, m->path, 0), m->inode, opened, NULL);
	if (fd < 0 && pid > 0) {
		/* The kernel's own link to the mapped inode: nothing of the path is resolved. */
		snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, m->start,
			 m->end);
		fd = open(mf, OPEN_FLAGS);
		fd = keep_inode(fd < 0 ? -errno : fd, 0, opened, mf);
	}
	if (fd < 0 && !m->deleted && own_view)
		fd = keep_inode(pt_target_open(0, m->path, 0), m->inode, opened, NULL);
	if (fd < 0 && !m->deleted && (flags & PT_MAPPED_ANY_INODE)) {
		fd = keep_inode(pt_target_open(pid, m->path, 0), 0, opened, NULL);
		if (fd < 0 && own_view)
			fd = keep_inode(pt_target_open(0, m->path, 0), 0, opened, NULL);
	}
	return fd;
}

int pt_proc_pidns(pid_t pid, struct stat *st)
{
	char path[64];

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/ns/pid");
	return stat(path, st) ? -errno : 0;
}

bool pt_page_resident(int pm_fd, uint64_t addr)
{
	uint64_t e;

	return pread(pm_fd, &e, sizeof(e), (off_t)(addr / 4096 * 8)) == (ssize_t)sizeof(e) &&
	       (e & PT_PAGEMAP_PRESENT);
}
