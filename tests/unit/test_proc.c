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
	snprintf(mfx, sizeof(mfx), "/proc/%d/root%s", getpid(), path);
	fd = pt_mapped_open(getpid(), &mp, 0, &opened);
	CHECK(fd >= 0 && fd_inode(fd) == ino, "mapped: the mapped inode");
	CHECK_STR(opened, mfx, "mapped: through the target's root while the path is that inode");
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
	CHECK_STR(opened, path, "gone: our own view of the path");
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
	rmdir(dir);
	return CHECK_DONE();
}
