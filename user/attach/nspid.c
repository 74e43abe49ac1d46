// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* nspid.c — the host PID of a process of peaktrace's PID namespace (bpf/nspid.bpf.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "nspid.skel.h"
#include "attach/nspid.h"
#include "target/proc.h"

/* The iterator's output is read whole up to this; more processes in one container are not
 * looked at (the target is then "not found": an error, never a wrong PID). */
#define PT_NSPID_MAX_OUT (4u << 20)

static int pidns_ino(unsigned long long *ino)
{
	struct stat st;
	int err = pt_proc_pidns(0, &st);

	if (!err)
		*ino = (unsigned long long)st.st_ino;
	return err;
}

bool pt_in_pid_namespace(void)
{
	unsigned long long ino;

	return pidns_ino(&ino) == 0 && ino != PT_PID_INIT_INO;
}

/* The iterator's lines "NS_PID HOST_TGID" into a malloc'd string. */
static int read_iter(struct nspid_bpf *skel, char **out)
{
	struct bpf_link *link = bpf_program__attach_iter(skel->progs.nspid, NULL);
	size_t len = 0, cap = 1 << 16;
	char *buf = NULL;
	int fd, err = 0;
	ssize_t n;

	if (!link)
		return -errno ? -errno : -EINVAL;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	buf = malloc(cap + 1);
	while (buf && (n = read(fd, buf + len, cap - len)) > 0) {
		len += (size_t)n;
		if (len == cap && cap < PT_NSPID_MAX_OUT) {
			char *b = realloc(buf, cap * 2 + 1);

			if (!b)
				break;
			buf = b;
			cap *= 2;
		} else if (len == cap) {
			break;
		}
	}
	if (!buf)
		err = -ENOMEM;
	else
		buf[len] = 0;
	close(fd);
out:
	bpf_link__destroy(link);
	*out = buf;
	return err;
}

int pt_host_tgid(pid_t pid, pid_t *host)
{
	unsigned long long ino = 0;
	struct nspid_bpf *skel;
	char *buf = NULL, *line, *save = NULL;
	int err = pidns_ino(&ino);

	*host = pid;
	if (err || ino == PT_PID_INIT_INO)
		return 0;   /* no namespace file (very old kernel): the PIDs are the host's */
	skel = nspid_bpf__open();
	if (!skel)
		return -errno ? -errno : -EINVAL;
	skel->rodata->ns_ino = ino;
	err = nspid_bpf__load(skel);
	if (!err)
		err = read_iter(skel, &buf);
	nspid_bpf__destroy(skel);
	if (err) {
		free(buf);
		return err < 0 ? err : -EINVAL;
	}
	err = -ESRCH;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int ns, h;

		if (sscanf(line, "%d %d", &ns, &h) == 2 && ns == pid) {
			*host = h;
			err = 0;
			break;
		}
	}
	free(buf);
	return err;
}

int pt_host_tgid_target(pid_t pid, pid_t *host)
{
	int err = pt_host_tgid(pid, host);

	if (err)
		fprintf(stderr, "peaktrace: cannot find which host PID PID %d is (peaktrace runs in a PID "
				"namespace of its own): %s\n", pid, strerror(-err));
	return err;
}
