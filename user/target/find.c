// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* find.c — the target found before anything runs (see find.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "util/fmt.h"
#include "target/find.h"
#include "target/launch.h"
#include "target/proc.h"

/* comm and exe are the target's to choose (prctl(PR_SET_NAME), the file name it runs): they
 * reach the terminal (stderr, report.txt) sanitized like every name in the profile. The
 * escaped comm (15 bytes, 60 escaped) fits; an exe path too long once escaped is cut. */
static void sanitize_names(char *comm, size_t comm_len, char *exe, size_t exe_len)
{
	char tmp[exe_len];

	snprintf(tmp, sizeof(tmp), "%s", comm);
	pt_sanitize(comm, comm_len, tmp);
	snprintf(tmp, sizeof(tmp), "%s", exe);
	pt_sanitize(exe, exe_len, tmp);
}

/* -p PID: a process (target/proc.h), said otherwise. */
static int check_pid(pid_t pid)
{
	int err = pt_proc_check_process(pid);

	if (err == -EINVAL)
		fprintf(stderr, "peaktrace: PID %d is a kernel thread: it has no user-space heap to trace\n",
			pid);
	else if (err == -ENOTDIR)
		fprintf(stderr, "peaktrace: %d is a thread, not a process: use its process ID\n", pid);
	else if (err)
		fprintf(stderr, "peaktrace: no such process: %d\n", pid);
	return !err ? 0 : err == -ESRCH ? -ESRCH : -ENOTSUP;
}

int pt_target_pid(pid_t pid, struct pt_allocator *alloc, char *comm, size_t comm_len,
		  char *exe_name, size_t exe_len)
{
	int err;

	if ((err = check_pid(pid)))
		return err;
	err = pt_find_allocator(pid, alloc);
	if (err == -ESRCH) {
		fprintf(stderr, "peaktrace: no such process: %d\n", pid);
		return -ESRCH;
	}
	if (err == -EINVAL) {
		fprintf(stderr, "peaktrace: PID %d has no user-space memory map (a kernel thread "
				"or a process that is exiting)\n", pid);
		return -ENOTSUP;
	}
	if (err == -EACCES || err == -EPERM) {
		fprintf(stderr, "peaktrace: cannot read the memory map of PID %d: %s\n", pid,
			strerror(-err));
		return -EPERM;
	}
	if (err) {
		fprintf(stderr, "peaktrace: no malloc found in the objects PID %d has mapped (a "
				"static binary without symbols, or an allocator peaktrace does not "
				"know)\n", pid);
		return -ENOTSUP;
	}
	/* alloc.open_path is the mapped inode's (target/proc.h, pt_mapped_open): /proc/self/fd/N
	 * of the file opened inside the target's root while that is the file the process maps
	 * (alloc keeps the fd), else its map_files link; never the target's path again. */
	pt_proc_comm(pid, comm, comm_len);
	pt_proc_exe(pid, exe_name, exe_len);
	sanitize_names(comm, comm_len, exe_name, exe_len);
	return 0;
}

int pt_target_command(const char *cmd, char **exe, char ***paths, int *npaths,
		      struct pt_allocator *alloc, char *comm, size_t comm_len, char *exe_name,
		      size_t exe_len)
{
	const char *b;
	int err;

	err = pt_load_order(cmd, exe, paths, npaths);
	if (err) {
		fprintf(stderr, "peaktrace: cannot execute %s: %s\n", cmd, strerror(-err));
		return err == -ENOENT ? -ENOENT : -ENOTSUP;
	}
	err = pt_find_allocator_in((const char *const *)*paths, *npaths, alloc);
	if (err) {
		fprintf(stderr, "peaktrace: no malloc found in %s or the libraries it loads (a "
				"static binary without symbols, or an allocator peaktrace does not "
				"know)\n", *exe);
		return -ENOTSUP;
	}
	snprintf(exe_name, exe_len, "%s", *exe);
	b = strrchr(*exe, '/');
	snprintf(comm, comm_len, "%.15s", b ? b + 1 : *exe);
	sanitize_names(comm, comm_len, exe_name, exe_len);
	return 0;
}
