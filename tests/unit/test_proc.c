// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_proc: the readers of the target's /proc (user/target/proc.c) and the one file reader
 * (user/util/file.c), on this process, files it makes and a FIFO. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "target/proc.h"
#include "target/procmaps.h"
#include "util/file.h"

static char dir[] = "/tmp/pt-test-proc-XXXXXX";

static void write_file(const char *path, size_t n, char c)
{
	char buf[4096];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	memset(buf, c, sizeof(buf));
	while (fd >= 0 && n) {
		size_t k = n < sizeof(buf) ? n : sizeof(buf);

		if (write(fd, buf, k) != (ssize_t)k)
			break;
		n -= k;
	}
	if (fd >= 0)
		close(fd);
}

static void test_environ_parse(void)
{
	static char buf[] = "A=1\0AB=2\0B=\0LD_PRELOAD=x.so\0A=3\0TRUNC=9";
	struct pt_environ e = { buf, sizeof(buf) - 1 };   /* the last entry has no NUL of its own */
	const char *p;
	int n = 0;

	CHECK_STR(pt_environ_get(&e, "A"), "1", "environ: the first A= wins");
	CHECK_STR(pt_environ_get(&e, "AB"), "2", "environ: AB is not A");
	CHECK_STR(pt_environ_get(&e, "B"), "", "environ: an empty value");
	CHECK(pt_environ_get(&e, "C") == NULL, "environ: absent name");
	CHECK(pt_environ_get(&e, "TRUNC") == NULL, "environ: an entry cut by the read is not returned");
	for (p = pt_environ_next(&e, NULL); p; p = pt_environ_next(&e, p))
		n++;
	CHECK(n == 5, "environ: entries in order, the cut one left out (got %d)", n);
	e.buf = NULL;
	e.len = 0;
	CHECK(pt_environ_next(&e, NULL) == NULL, "environ: empty");
}

static void test_environ_self(void)
{
	struct pt_environ e;
	const char *path = getenv("PATH");

	CHECK(pt_environ_read(getpid(), &e) == 0, "environ of this process read");
	if (path)
		CHECK_STR(pt_environ_get(&e, "PATH"), path, "environ: PATH as at exec");
	pt_environ_free(&e);
	CHECK(pt_environ_read(-1, &e) != 0, "environ of no process: an error");
}

static void test_read_file(void)
{
	char path[128], fifo[128], *b;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/big", dir);
	write_file(path, 10000, 'x');
	b = pt_read_file(path, 1 << 20, &len);
	CHECK(b && len == 10000 && b[len] == 0, "read_file: whole file (got %zu)", len);
	free(b);
	b = pt_read_file(path, 100, &len);
	CHECK(b && len == 100 && b[100] == 0, "read_file: capped at max (got %zu)", len);
	free(b);
	errno = 0;
	snprintf(fifo, sizeof(fifo), "%s/nope", dir);
	CHECK(pt_read_file(fifo, 100, &len) == NULL && errno == ENOENT, "read_file: missing file");
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK(mkfifo(fifo, 0600) == 0, "fifo made");
	b = pt_read_file(fifo, 100, &len);
	CHECK(b && len == 0, "read_file: a FIFO with no writer does not block");
	free(b);
	unlink(fifo);
	unlink(path);
}

static void test_status(void)
{
	char comm[64] = "", name[64] = "";

	pt_proc_comm(getpid(), comm, sizeof(comm));
	CHECK(pt_proc_status_field(getpid(), "Name", name, sizeof(name)) == 0, "status: Name read");
	CHECK_STR(name, comm, "status Name is comm");
	CHECK(strstr("test_proc", comm) != NULL, "comm is this binary's (%s)", comm);
	CHECK(pt_proc_status_field(getpid(), "NoSuchField", name, sizeof(name)) == -ENOENT,
	      "status: absent field");
	CHECK(pt_proc_status_field(getpid(), "Vm", name, sizeof(name)) == -ENOENT,
	      "status: a prefix of a field is not the field");
	CHECK(pt_proc_status_bytes(getpid(), "VmRSS") > 1024 * 1024, "status: VmRSS in bytes");
	CHECK(pt_proc_status_bytes(-1, "VmRSS") == 0, "status of no process: 0");
}

/* Our own mapping of path, as maps names it. */
static int find_mapping(const char *path, struct pt_mapping *out, char *pbuf, size_t plen)
{
	struct pt_maps maps;
	int found = -1;

	if (pt_maps_read(getpid(), &maps))
		return -1;
	for (int i = 0; i < maps.n; i++)
		if (maps.m[i].path && !strcmp(maps.m[i].path, path)) {
			*out = maps.m[i];
			snprintf(pbuf, plen, "%s", maps.m[i].path);
			out->path = pbuf;
			found = 0;
			break;
		}
	pt_maps_free(&maps);
	return found;
}

static uint64_t fd_inode(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static void test_mapped_open(void)
{
	char path[128], other[128], mfx[256], pbuf[256], *opened = NULL;
	struct pt_mapping m = { 0 };
	struct pt_mapped mp;
	uint64_t ino;
	void *addr;
	int fd, mfd;

	snprintf(path, sizeof(path), "%s/lib.so", dir);
	snprintf(other, sizeof(other), "%s/new.so", dir);
	write_file(path, 8192, 'a');
	mfd = open(path, O_RDONLY);
	addr = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, mfd, 0);
	close(mfd);
	CHECK(addr != MAP_FAILED, "file mapped");
	if (addr == MAP_FAILED)
		return;
	CHECK(find_mapping(path, &m, pbuf, sizeof(pbuf)) == 0, "mapping found in maps");
	ino = m.inode;
	mp = (struct pt_mapped){ m.path, m.start, m.end, m.inode, m.deleted };
	fd = pt_mapped_open(getpid(), &mp, 0, &opened);
	snprintf(mfx, sizeof(mfx), "/proc/self/fd/%d", fd);
	CHECK(fd >= 0 && fd_inode(fd) == ino, "mapped: the mapped inode");
	CHECK_STR(opened, mfx, "mapped: inside the target's root while the path is that inode, "
		  "named by its fd");
	close(fd);
	free(opened);

	/* Replaced on disk (an upgrade while the process runs): map_files names the mapped one. */
	write_file(other, 4096, 'b');
	CHECK(rename(other, path) == 0, "file replaced");
	snprintf(mfx, sizeof(mfx), "/proc/%d/map_files/", getpid());
	fd = pt_mapped_open(getpid(), &mp, 0, &opened);
	CHECK(fd >= 0 && fd_inode(fd) == ino, "replaced: still the mapped inode");
	CHECK(opened && !strncmp(opened, mfx, strlen(mfx)), "replaced: through map_files (%s)",
	      opened ? opened : "(null)");
	close(fd);
	free(opened);
	/* A target that has gone (no root, no map_files: pid 0 here): never the other inode... */
	fd = pt_mapped_open(0, &mp, 0, &opened);
	CHECK(fd < 0 && !opened, "gone, replaced: no file rather than another inode");
	/* ...unless asked for one. */
	fd = pt_mapped_open(0, &mp, PT_MAPPED_ANY_INODE, &opened);
	CHECK(fd >= 0 && fd_inode(fd) != ino, "gone, replaced, ANY_INODE: the file now at the path");
	snprintf(mfx, sizeof(mfx), "/proc/self/fd/%d", fd);
	CHECK_STR(opened, mfx, "gone: our own view of the path, named by its fd");
	if (fd >= 0)
		close(fd);
	free(opened);

	/* A FIFO planted at the path: never opened, never blocks. */
	unlink(path);
	CHECK(mkfifo(path, 0600) == 0, "fifo at the mapped path");
	fd = pt_mapped_open(0, &mp, PT_MAPPED_ANY_INODE, &opened);
	CHECK(fd < 0 && !opened, "fifo: not a regular file, refused");
	unlink(path);

	/* Deleted: only map_files is the file, whatever else sits at the path. */
	mp.deleted = true;
	write_file(path, 4096, 'c');
	fd = pt_mapped_open(getpid(), &mp, PT_MAPPED_ANY_INODE, &opened);
	CHECK(fd >= 0 && fd_inode(fd) == ino, "deleted: the mapped inode through map_files");
	close(fd);
	free(opened);
	fd = pt_mapped_open(0, &mp, PT_MAPPED_ANY_INODE, &opened);
	CHECK(fd < 0, "deleted, gone: never the file now at the path");
	unlink(path);
	munmap(addr, 8192);
}

/* ---- pt_open_in_root / pt_target_open ----------------------------------------------------- */

static void write_str(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror("write");
		close(fd);
	}
}

/* What fd holds (up to 63 bytes), "" when fd < 0. */
static const char *fd_text(int fd)
{
	static char buf[64];
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : 0;

	buf[n > 0 ? n : 0] = 0;
	return buf;
}

/*
 * A "root" made in dir:      root/etc/file  "inside"      root/lib -> /etc (absolute)
 *   root/abs -> /etc/file    root/rel -> ../etc/file        root/dotdot -> ../../(x22)
 *   root/esc -> HOST (absolute path of a file outside the root)   root/fifo (a FIFO)
 *   root/loop -> loop        root/etc/big (100 bytes)
 * and dir/outside "HOST": never reached from root.
 */
static void test_open_in_root_mode(int rootfd, unsigned fl, const char *mode, const char *host)
{
	int fd;

#define OPEN_TEXT(p, want, what) do { fd = pt_open_in_root(rootfd, p, 0, fl); \
	CHECK(fd >= 0 && !strcmp(fd_text(fd), want), "%s: %s (%s: got \"%s\", fd %d)", mode, what, \
	      p, fd_text(fd), fd); if (fd >= 0) close(fd); } while (0)
#define OPEN_NOT(p, what) do { fd = pt_open_in_root(rootfd, p, 0, fl); \
	CHECK(fd < 0 || strcmp(fd_text(fd), "HOST"), "%s: %s (%s: fd %d, \"%s\")", mode, what, p, \
	      fd, fd_text(fd)); if (fd >= 0) close(fd); } while (0)

	OPEN_TEXT("/etc/file", "inside", "a plain path");
	OPEN_TEXT("etc/file", "inside", "a relative path is relative to the root");
	OPEN_TEXT("/abs", "inside", "an absolute symlink resolves inside the root");
	OPEN_TEXT("/lib/file", "inside", "an absolute symlink in the middle resolves inside the root");
	OPEN_TEXT("/rel", "inside", "a relative symlink");
	OPEN_TEXT("/../../../../etc/file", "inside", "\"..\" above the root stays at the root");
	OPEN_NOT("/esc", "an absolute symlink to a host file stays inside (no such file there)");
	fd = pt_open_in_root(rootfd, "/esc", 0, fl);
	CHECK(fd == -ENOENT, "%s: the escaping symlink names nothing inside (%d)", mode, fd);
	if (fd >= 0)
		close(fd);
	OPEN_NOT("/dotdot", "a symlink climbing with \"..\" stays inside");
	OPEN_NOT(host, "the host file's own absolute path is looked up inside the root");
	fd = pt_open_in_root(rootfd, "/fifo", 0, fl);
	CHECK(fd == -EINVAL, "%s: a FIFO is refused, without blocking (%d)", mode, fd);
	fd = pt_open_in_root(rootfd, "/etc", 0, fl);
	CHECK(fd < 0, "%s: a directory is refused (%d)", mode, fd);
	fd = pt_open_in_root(rootfd, "/loop", 0, fl);
	CHECK(fd == -ELOOP, "%s: a symlink loop ends (%d)", mode, fd);
	fd = pt_open_in_root(rootfd, "/etc/big", 50, fl);
	CHECK(fd == -EFBIG, "%s: a file over the size cap is refused (%d)", mode, fd);
	fd = pt_open_in_root(rootfd, "/etc/big", 100, fl);
	CHECK(fd >= 0, "%s: a file at the size cap is opened (%d)", mode, fd);
	if (fd >= 0)
		close(fd);
#undef OPEN_TEXT
#undef OPEN_NOT
}

static void test_open_in_root(void)
{
	char root[160], p[256], host[200], self[64];
	int rootfd, fd, hostfd;

	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(host, sizeof(host), "%s/outside", dir);
	write_str(host, "HOST");
	mkdir(root, 0755);
	snprintf(p, sizeof(p), "%s/etc", root);
	mkdir(p, 0755);
	snprintf(p, sizeof(p), "%s/etc/file", root);
	write_str(p, "inside");
	snprintf(p, sizeof(p), "%s/etc/big", root);
	write_file(p, 100, 'x');
	snprintf(p, sizeof(p), "%s/lib", root);
	CHECK(symlink("/etc", p) == 0, "symlink lib");
	snprintf(p, sizeof(p), "%s/abs", root);
	CHECK(symlink("/etc/file", p) == 0, "symlink abs");
	snprintf(p, sizeof(p), "%s/rel", root);
	CHECK(symlink("../etc/file", p) == 0, "symlink rel");
	snprintf(p, sizeof(p), "%s/dotdot", root);
	/* dotdot/ + the host file's path: the host file if ".." ever left the root. */
	CHECK(symlink("../../../../../../../../../../../../../../../../../../../../../..", p) == 0,
	      "symlink dotdot");
	snprintf(p, sizeof(p), "%s/esc", root);
	CHECK(symlink(host, p) == 0, "symlink esc -> host file");
	snprintf(p, sizeof(p), "%s/fifo", root);
	CHECK(mkfifo(p, 0600) == 0, "fifo");
	snprintf(p, sizeof(p), "%s/loop", root);
	CHECK(symlink("loop", p) == 0, "symlink loop");

	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(rootfd >= 0, "root opened");
	if (rootfd < 0)
		return;
	test_open_in_root_mode(rootfd, 0, "openat2", host);
	test_open_in_root_mode(rootfd, PT_OPEN_WALK, "walk", host);
	snprintf(p, sizeof(p), "/dotdot%s", host);
	fd = pt_open_in_root(rootfd, p, 0, 0);
	CHECK(fd < 0, "openat2: \"..\" through a symlink then the host path: not the host file (%d)", fd);
	fd = pt_open_in_root(rootfd, p, 0, PT_OPEN_WALK);
	CHECK(fd < 0, "walk: \"..\" through a symlink then the host path: not the host file (%d)", fd);

	/* A magic link (/proc/self/fd/N jumps to whatever N is, wherever it is): refused. In our own
	 * root (pid 0), /proc is there. */
	hostfd = open(host, O_RDONLY | O_CLOEXEC);
	snprintf(self, sizeof(self), "/proc/self/fd/%d", hostfd);
	fd = pt_target_open(0, self, 0);
	CHECK(fd == -ELOOP, "openat2: a magic link is refused (%d)", fd);
	if (fd >= 0)
		close(fd);
	/* The walk resolves the link's text inside the root instead: from our root that is the
	 * same file, from another root a path inside it. */
	fd = pt_open_in_root(rootfd, self, 0, PT_OPEN_WALK);
	CHECK(fd < 0, "walk: a magic link inside another root does not reach the host (%d)", fd);
	close(hostfd);
	close(rootfd);

	/* pt_target_open: this process's root is "/", the file by its full path. */
	snprintf(p, sizeof(p), "%s/etc/file", root);
	fd = pt_target_open(getpid(), p, 0);
	CHECK(fd >= 0 && !strcmp(fd_text(fd), "inside"), "pt_target_open(self) reads the file");
	if (fd >= 0)
		close(fd);
	fd = pt_target_open(1 << 30, p, 0);
	CHECK(fd == -ESRCH, "pt_target_open of no process: -ESRCH (%d)", fd);
	CHECK(pt_target_same_root(getpid()) == 1 && pt_target_same_root(0) == 1, "own root is ours");

	/* Clean up. */
	{
		static const char *const names[] = { "etc/file", "etc/big", "lib", "abs", "rel",
						     "dotdot", "esc", "fifo", "loop" };
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(p, sizeof(p), "%s/%s", root, names[i]);
			unlink(p);
		}
		snprintf(p, sizeof(p), "%s/etc", root);
		rmdir(p);
		rmdir(root);
		unlink(host);
	}
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_environ_parse();
	test_environ_self();
	test_read_file();
	test_status();
	test_mapped_open();
	test_open_in_root();
	rmdir(dir);
	return CHECK_DONE();
}
