/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* boundary.h — invocation boundaries from uprobes on runtime functions (--boundary start=..,end=..). */
#ifndef PEAKTRACE_BOUNDARY_H
#define PEAKTRACE_BOUNDARY_H
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "attach/links.h"

struct peaktrace_bpf;

struct pt_boundary_point {
	char lib[256];     /* object: a path, or the start of a file name ("oom", "libfoo") */
	char sym[256];     /* symbol: plain or mangled name, or a demangled C++ name */
	bool at_return;    /* fire when the function returns (else at its entry) */
};

struct pt_boundary_spec {
	struct pt_boundary_point start;  /* default: at return (a get-next call returned work) */
	struct pt_boundary_point end;    /* default: at entry (the result is being posted) */
};

/* "start=LIB:SYM[:entry|:return],end=LIB:SYM[:entry|:return]". Returns 0 or -EINVAL. Pure. */
int pt_boundary_parse(const char *spec, struct pt_boundary_spec *out);

/* Find the point's object among the target's mapped objects (pid > 0) or the given paths
 * (launch mode), and the file offset of its symbol. *open_path is malloc'd and names the file
 * that was read: for pid > 0 the mapped inode opened safely (target/proc.h, pt_mapped_open:
 * "/proc/self/fd/N" of *open_fd, or a map_files link), never the target's path resolved again;
 * attach by it before closing *open_fd (-1 when there is none to close). Returns 0, -ENOENT
 * (no such object or symbol) or -errno. */
int pt_boundary_resolve(pid_t pid, const char *const *paths, int npaths,
			const struct pt_boundary_point *p, char **open_path, int *open_fd,
			uint64_t *offset);

/* Uprobes on the spec's start and end points (cookies 1 and 2), in link group 2: among the
 * target's mapped objects, or in launch mode among paths. Returns 0 or -errno (said on stderr). */
int pt_attach_boundaries(struct peaktrace_bpf *skel, struct pt_links *links,
			 const struct pt_boundary_spec *spec, pid_t pid, const char *const *paths,
			 int npaths, bool launched, bool verbose);
/* --boundary uprobe: aws-lambda-cpp's get_next/post_success/post_failure (cookies 3-5), all
 * three or none. Returns 0, -ENOENT when the runtime is not (yet) among the objects (said on
 * stderr unless quiet: the session tries again when new code is mapped, e.g. the runtime
 * client's native addon dlopened at start-up), or another -errno (said on stderr). */
int pt_attach_aws_boundaries(struct peaktrace_bpf *skel, struct pt_links *links, pid_t pid,
			     const char *const *paths, int npaths, bool launched, bool quiet);
/* aws-lambda-cpp's boundaries, now, or (retry) once new code is mapped, among what pid maps
 * then (seeding the runtime API's first start, host_pid as the BPF programs see pid): *pending
 * says whether it is still not mapped (-ENOENT above: try again). Returns 0 or -errno of a real
 * failure. */
int pt_aws_boundaries(struct peaktrace_bpf *skel, struct pt_links *links, pid_t pid, pid_t host_pid,
		      const char *const *paths, int npaths, bool launched, bool retry, bool *pending);
#endif
