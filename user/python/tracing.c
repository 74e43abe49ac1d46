// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tracing.c — CPython in the traced target, while it is traced (tracing.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "util/fmt.h"
#include "python/tracing.h"

void pt_python_locate(struct pt_python *p, bool found, pid_t pid, const struct pt_python_bpf *b,
		      bool verbose)
{
	struct pt_py_offsets *o = b->off;

	if (!found || o->runtime || p->info.lost || pt_py_locate(pid, &p->info))
		return;
	/* Offsets that fail on the live target are not used (pt_python_check retries while the
	 * interpreter is not up yet). */
	if (pt_py_check_live(pid, &p->info) == -EPROTO) {
		pt_py_warn(&p->info);
		return;
	}
	p->res = pt_py_resolver_new(pid, &p->info);
	/* Offsets first, the address last: the walk starts when it sees a runtime. */
	*o = p->info.off;
	o->runtime = 0;
	__atomic_store_n(&o->runtime, p->info.off.runtime, __ATOMIC_RELEASE);
	if (verbose) {
		char path[512];

		pt_sanitize(path, sizeof(path), p->info.path);
		fprintf(stderr, "peaktrace: CPython 3.%u in %s: _PyRuntime at 0x%" PRIx64 "\n",
			p->info.minor, path, (uint64_t)p->info.off.runtime);
	}
}

void pt_python_check(struct pt_python *p, bool found, pid_t pid, const struct pt_python_bpf *b,
		     bool verbose)
{
	int err;

	if (!found || p->info.check || p->info.lost || !b->off->runtime)
		return;
	err = pt_py_check_live(pid, &p->info);
	if (!err && verbose)
		fprintf(stderr, "peaktrace: CPython 3.%u offsets (%s) checked on the live target\n",
			p->info.minor, p->info.from_debug ? "its _Py_DebugOffsets" : "table");
	if (err != -EPROTO)
		return;
	__atomic_store_n(&b->off->runtime, 0, __ATOMIC_RELEASE);
	pt_py_warn(&p->info);
}

void pt_python_event(struct pt_python *p, const struct pt_python_bpf *b, uint32_t idx)
{
	struct pt_py_stack ps;
	struct pt_stack_rec rec;

	if (!p->res || bpf_map_lookup_elem(b->stacks_fd, &idx, &rec) ||
	    pt_py_words_read(b->py_chunks_fd, b->py_stacks_fd, idx, &rec, &ps))
		return;
	pt_py_resolve_stack(p->res, idx, ps.w, rec.py_nr);
}

bool pt_python_exec(struct pt_python *p, bool fp_stacks, char **paths, int npaths, pid_t pid,
		    const struct pt_python_bpf *b)
{
	struct pt_py_info py;

	memset(&py, 0, sizeof(py));
	__atomic_store_n(&b->off->runtime, 0, __ATOMIC_RELEASE);
	if (!fp_stacks || (paths ? pt_py_detect((const char *const *)paths, npaths, &py)
				 : pt_py_detect_pid(pid, &py))) {
		pt_py_info_free(&py);
		return false;
	}
	pt_py_resolver_free(p->res);
	p->res = NULL;
	pt_py_info_free(&p->info);
	p->info = py;
	return true;
}

const struct pt_py_stack *const *pt_python_collect(struct pt_python *p, const struct pt_stack_table *t,
						   uint32_t nstacks, const struct pt_python_bpf *b)
{
	p->words = calloc(nstacks ? nstacks : 1, sizeof(*p->words));
	p->nwords = p->words ? nstacks : 0;
	for (uint32_t k = 0; p->words && k < nstacks; k++) {
		struct pt_stack_rec rec;

		if (!pt_stack_table_py_nr(t, k) || !(p->words[k] = malloc(sizeof(*p->words[k]))))
			continue;
		pt_stack_table_get(t, k, &rec);
		if (pt_py_words_read(b->py_chunks_fd, b->py_stacks_fd, k, &rec, p->words[k])) {
			free(p->words[k]);
			p->words[k] = NULL;
		}
	}
	return (const struct pt_py_stack *const *)p->words;
}

void pt_python_free(struct pt_python *p)
{
	for (uint32_t k = 0; p->words && k < p->nwords; k++)
		free(p->words[k]);
	free(p->words);
	p->words = NULL;
	pt_py_resolver_free(p->res);
	p->res = NULL;
	pt_py_info_free(&p->info);
}
