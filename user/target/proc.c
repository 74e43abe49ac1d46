// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* proc.c — what peaktrace reads of the target through /proc (see proc.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* Opens path if it is a regular file, and with want_inode only if it is that inode. */
static int open_regular(const char *path, uint64_t want_inode, char **opened)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (want_inode && (uint64_t)st.st_ino != want_inode)) {
		close(fd);
		return -ENOENT;
	}
	if (opened && !(*opened = strdup(path))) {
		close(fd);
		return -ENOMEM;
	}
	return fd;
}

int pt_mapped_open(pid_t pid, const struct pt_mapped *m, unsigned flags, char **opened)
{
	char mf[96], *root = pt_target_path(pid, m->path);
	int fd = -ENOENT;

	if (opened)
		*opened = NULL;
	if (!root)
		return -ENOMEM;
	if (!m->deleted)
		fd = open_regular(root, m->inode, opened);
	if (fd < 0 && pid > 0) {
		snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, m->start,
			 m->end);
		fd = open_regular(mf, 0, opened);
	}
	if (fd < 0 && !m->deleted)
		fd = open_regular(m->path, m->inode, opened);
	if (fd < 0 && !m->deleted && (flags & PT_MAPPED_ANY_INODE)) {
		fd = open_regular(root, 0, opened);
		if (fd < 0)
			fd = open_regular(m->path, 0, opened);
	}
	free(root);
	return fd;
}
