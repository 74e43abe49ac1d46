// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * session.c — one tracing session: the target, the BPF object and its links, the event loop,
 * the invocations as they end, and the report once tracing stops. main() calls the steps in
 * order (session.h); pt_session_free() is the one cleanup path.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "util/fmt.h"
#include "util/stop.h"
#include "util/outdir.h"
#include "util/wake.h"
#include "util/status.h"
#include "bpf/sample.h"
#include "bpf/inv.h"
#include "peaktrace.skel.h"
#include "bpfload.h"
#include "attach/attachall.h"
#include "target/launch.h"
#include "target/procmaps.h"
#include "attach/links.h"
#include "attach/nspid.h"
#include "maps/mapread.h"
#include "unwind/unwind_maps.h"
#include "symbolize/warm.h"
#include "profile/collect.h"
#include "python/tracing.h"
#include "python/objects.h"
#include "target/nodeflags.h"
#include "arenas/resident.h"
#include "arenas/arenas.h"
#include "invocation/invocation.h"
#include "invocation/boundary.h"
#include "invocation/stream.h"
#include "arenas/invend.h"
#include "exec/exec.h"
#include "report/report.h"
#include "rss/rss.h"
#include "compare/compare.h"
#include "timeline/timeline.h"
#include "kernel/features.h"
#include "cli.h"
#include "session.h"
#include "spare.h"
#include "target/proc.h"
#include "target/find.h"

struct pt_session {
	const struct pt_options *opt;
	struct pt_spare spare;   /* a spare session's order (follow.h) */
	/* target */
	struct pt_child child;
	pid_t pid;
	pid_t host_pid;         /* pid as the BPF programs see it (the host's; attach/nspid.h) */
	bool launched;
	bool supervised;         /* launch mode under a supervisor (--supervised, target/launch.h) */
	bool started;            /* the command runs (launch mode: it was let go to exec) */
	char **paths;            /* launch mode: the program and the libraries it loads */
	char *exe;
	int npaths;
	struct pt_allocator alloc;
	bool exited;             /* target group died (event or wait) */
	int exit_code;           /* task exit code from the exit event */
	uint64_t hiwater;        /* from the exit event */
	uint64_t vmhwm;
	bool need_refresh;
	/* --boundary uprobe: aws-lambda-cpp not mapped yet (a runtime client dlopens it): tried
	 * again whenever new code is mapped */
	bool aws_pending;
	/* BPF */
	struct peaktrace_bpf *skel;   /* the maps; skel->progs.X the programs, loaded by parts */
	struct pt_bpf_parts parts;    /* the objects that loaded the programs (bpfload.h) */
	bool multi;              /* uprobe-multi links */
	struct pt_links links;
	struct ring_buffer *rb;
	struct pt_waiter waiter;   /* what the poll loop sleeps on (util/wake.h) */
	struct pt_unwinder *unw;
	struct pt_uwcache unwind_cache;   /* unwind tables by build id across runs */
	struct pt_symbolizer *sym;
	uint64_t start_ns;
	uint64_t t0_ns;          /* peaktrace's start (pt_session_new): start-up figures from here */
	double unw_ms0;          /* unwind table work done before the target ran, ms */
	/* invocations: the records (where the report reads them), and their stream while tracing
	 * (invocation/stream.h) */
	struct pt_inv_list invs;
	struct pt_inv_stream inv;
	struct pt_exec exec;      /* the target's execs (exec/exec.h) */
	/* CPython in the target (python.h): found before load; located (runtime address known to
	 * BPF) once its object is mapped; frame names read as new stacks appear. */
	bool py_found;
	bool burst_events;      /* PT_EV_PY_STACK, PT_EV_RSS_STACK records taken since the last poll */
	struct pt_python python;   /* python/tracing.h */
	uint64_t node_flags_missing;   /* node images without the perf-map flags (warned) */
	struct pt_pyobjects pyobjects;   /* --python-objects (python/objects.h) */
	/* glibc arenas */
	bool arenas;             /* accounting on */
	/* the arenas, read at the target's exit stop (launch mode), else at the end */
	struct pt_arenas arena_reading;
	/* collected once tracing stops */
	struct pt_report rep;
	struct pt_stack_table stacks_map;  /* the kernel's stack table [0, nstacks), compacted */
	uint32_t nstacks;                  /* its entries read (pt_stacks_span) */
	struct pt_collect_in collect_in;   /* what building the profile reads (profile/collect.h) */
	struct pt_collect_stats collect_stats;
	struct pt_timeline timeline;   /* memory over time (timeline/timeline.h) */
	int tl_err;              /* writing DIR/timeline.*: -errno (the report exits EXIT_OUTPUT) */
};

/* A spare session that no process needed (session.h): it ends with EXIT_OK. */
#define SPARE_UNUSED (-1000)
/* A held image's session's ring buffer (a spare's, or one started for the image): what a
 * runtime's init sends while its symbols are read after its release (python3's init: ~4,000
 * events in the first 100 ms, against the 64 KiB default's ~1,170). */
#define SPARE_RINGBUF (4u << 20)

static bool verbose;   /* -v, for libbpf_print (libbpf passes no context) */

/*
 * The first SIGINT/SIGTERM/SIGHUP stops tracing: the poll loop ends, the probes are detached
 * and the report is written. A second one exits at once, without a report (target/launch.c,
 * pt_stop_signals_catch): whoever sends it will not wait for the orderly stop, whose slow parts
 * (one RCU grace period per perf-event uprobe to detach, symbolizing) are exactly what a "cheap"
 * report would still need. A launched command still held before exec reads EOF on its go pipe
 * and exits. Under a supervisor (--supervised) signals after the first are passed to the
 * command instead.
 */
static const char second_signal_msg[] = "peaktrace: second signal: exiting now without a report "
					"(the probes are detached as peaktrace exits)\n";

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	if (level == LIBBPF_WARN && !verbose)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- target checks ------------------------------------------------------------------------ */

/* Made if absent, checked and held open (util/outdir.h): every output is created through it. */
static int check_outdir(const char *dir)
{
	return pt_outdir_prepare(dir) ? EXIT_OUTPUT : EXIT_OK;
}

/* ---- events and invocations ---------------------------------------------------------- */

/* Malloc heap and pymalloc arenas resident at an invocation's end, from the target's mappings
 * (arenas/resident.h): no kernel tables, so --light has them too. User space, after the
 * boundary: the target runs on. */
static void resident_reading(struct pt_session *s, struct pt_inv_record *rec)
{
	pt_rss_inv_resident(rec, s->pid, s->py_found);
}

/* An ended invocation's reading, a moment after its end (invocation/stream.h): resident memory
 * by allocator, and the arenas' figures. */
static void inv_end_reading(void *ctx, struct pt_inv_record *rec, uint32_t idx)
{
	struct pt_session *s = ctx;

	resident_reading(s, rec);
	if (s->arenas)
		pt_arenas_inv_end(rec, s->invs.r, idx, s->pid, bpf_map__fd(s->skel->maps.arenas),
				  &s->skel->bss->g);
}

/* What an invocation's record takes of the target (invocation/stream.h). */
static struct pt_inv_target inv_target(struct pt_session *s)
{
	struct pt_inv_target t = { .exited = s->exited, .exit_code = s->exit_code,
				   .hiwater = s->hiwater, .vmhwm = &s->vmhwm };

	return t;
}

static void collect_arenas(struct pt_session *s)
{
	if (!s->arenas || s->arena_reading.collected)
		return;
	s->arena_reading.from_start = s->launched;
	s->arena_reading.invocations = s->invs.total_inv;   /* kept in memory or not */
	pt_arenas_collect(&s->arena_reading, s->pid, bpf_map__fd(s->skel->maps.arenas),
			  bpf_map__fd(s->skel->maps.thread_slots), &s->skel->bss->g);
}

/* Stack indexes to read (invocation/stream.h). */
static uint32_t stacks_span(const struct pt_session *s)
{
	return pt_stacks_span(s->skel, s->opt->max_stacks);
}

/* Where per-invocation stacks are named: with the target's Python frames when it runs CPython. */
static struct pt_stack_src inv_src(struct pt_session *s)
{
	struct pt_stack_src src = {
		.stacks_fd = bpf_map__fd(s->skel->maps.stacks),
		.py_fd = s->py_found ? bpf_map__fd(s->skel->maps.py_stacks) : -1,
		.py_chunks_fd = s->py_found ? bpf_map__fd(s->skel->maps.py_chunks) : -1,
		.py = s->python.res,
		.sym = s->sym,
	};

	return src;
}

/* Print and stream the invocations ended since the last call (invocation/stream.h). */
static void flush_invocations(struct pt_session *s)
{
	struct pt_stack_src src = inv_src(s);

	pt_inv_flush(&s->inv, &src);
}

/* The BPF side of CPython's walk (python/tracing.h). */
static struct pt_python_bpf python_bpf(struct pt_session *s)
{
	struct pt_python_bpf b = {
		.off = &s->skel->bss->py_off,
		.stacks_fd = bpf_map__fd(s->skel->maps.stacks),
		.py_stacks_fd = bpf_map__fd(s->skel->maps.py_stacks),
		.py_chunks_fd = bpf_map__fd(s->skel->maps.py_chunks),
	};

	return b;
}

static void python_locate(struct pt_session *s)
{
	struct pt_python_bpf b = python_bpf(s);

	pt_python_locate(&s->python, s->py_found, s->pid, &b, s->opt->verbose);
}

static void python_check(struct pt_session *s)
{
	struct pt_python_bpf b = python_bpf(s);

	pt_python_check(&s->python, s->py_found, s->pid, &b, s->opt->verbose);
}

static void python_new_stack(struct pt_session *s, uint32_t idx)
{
	struct pt_python_bpf b = python_bpf(s);

	pt_python_event(&s->python, &b, idx);
}

static void consume_events(void *arg)
{
	ring_buffer__consume(arg);
}

/* Every symbol table of what the target maps now (symbolize.h). consume: the target runs (a held
 * image let go first): its events are taken between objects, as the poll loop would. */
static void warm_symbolizer(struct pt_session *s, bool consume)
{
	if (s->sym)
		pt_sym_warm(s->sym, s->pid, consume ? consume_events : NULL, s->rb);
}

static void target_exec_event(struct pt_session *s, uint64_t ts, uint32_t first_stack);

static int on_event(void *ctx, void *data, size_t len)
{
	struct pt_session *s = ctx;
	const struct pt_event *e = data;

	if (len < sizeof(__u32))
		return 0;
	switch (e->type) {
	case PT_EV_EXIT:
		if (len < sizeof(*e))
			return 0;
		s->exited = true;
		s->exit_code = e->exit_code;
		if (e->hiwater_rss > s->hiwater)
			s->hiwater = e->hiwater_rss;
		break;
	case PT_EV_EXEC:
		/* Launch mode re-resolves at the exec stop (at_child_exec; the first one is the
		 * command's own exec). Attached, now (exec/exec.h). */
		if (len >= sizeof(*e))
			target_exec_event(s, e->ts, (uint32_t)e->addr);
		s->need_refresh = true;
		break;
	case PT_EV_EXEC_MAP:
		s->need_refresh = true;
		break;
	case PT_EV_PY_STACK:
		s->burst_events = true;
		if (len >= sizeof(*e))
			python_new_stack(s, (uint32_t)e->addr);
		break;
	case PT_EV_RSS_OBJ:
		break;   /* woke the poll loop: it reads the maps after this batch (rss_obj_names) */
	case PT_EV_RSS_STACK:
		s->burst_events = true;
		if (len >= sizeof(*e))
			pt_rss_event(&s->rep.rss, s->pid, (uint32_t)e->len, e->addr, e->ts);
		break;
	case PT_EV_INV_START:
	case PT_EV_INV_RECORD:
	case PT_EV_INV_END: {
		struct pt_inv_target t = inv_target(s);

		pt_inv_event(&s->inv, data, len, &t);
		break;
	}
	}
	return 0;
}

/* ---- exec: the target became another program (exec/exec.h) ---------------------------- */


/* --python-objects (python/objects.h): planned; attached too when the programs are loaded (an
 * exec). start: the command's first image in launch mode, whose environment peaktrace chose. */
static void pyobj_setup(struct pt_session *s, bool attach, bool start)
{
	if (!s->opt->python_objects || s->opt->light)
		return;
	pt_pyobj_setup(&s->pyobjects, &s->rep.pyobj, s->launched, s->pid, s->python.info.path,
		       s->python.info.inode, start);
	if (attach)
		pt_pyobj_attach(&s->pyobjects, &s->rep.pyobj, s->skel, &s->links, s->pid, s->multi);
}

/* CPython in the new image: its offsets for the walk (which stops until it is located). */
static void exec_python(struct pt_session *s, char **paths, int npaths, struct pt_exec_note *x)
{
	struct pt_python_bpf b = python_bpf(s);

	if (!pt_python_exec(&s->python, s->opt->fp_stacks, paths, npaths, s->pid, &b))
		return;
	s->py_found = true;
	x->python = true;
	python_locate(s);
	pyobj_setup(s, true, false);
}

static void exec_python_cb(void *ctx, char **paths, int npaths, struct pt_exec_note *x)
{
	exec_python(ctx, paths, npaths, x);
}

static bool exec_settle_step(void *arg);

/* What an exec changes of the session, and what it uses (exec/exec.h). */
static struct pt_exec_image exec_image(struct pt_session *s)
{
	struct pt_exec_image img = {
		.alloc = &s->alloc, .probes = s->rep.probes, .nprobes = &s->rep.nprobes,
		.paths = &s->paths, .npaths = &s->npaths, .exe = &s->exe,
		.exe_name = s->rep.exe, .exe_name_len = sizeof(s->rep.exe),
		.comm = s->rep.comm, .comm_len = sizeof(s->rep.comm),
		.node_note = s->rep.node_flags_note, .node_note_len = sizeof(s->rep.node_flags_note),
		.node_flags_missing = &s->node_flags_missing, .notes = &s->rep.execs,
	};

	return img;
}

static struct pt_exec_env exec_env(struct pt_session *s)
{
	struct pt_exec_env env = {
		.pid = s->pid, .light = s->opt->light, .verbose = s->opt->verbose, .multi = s->multi,
		.start_ns = s->start_ns, .skel = s->skel, .links = &s->links, .sym = s->sym,
		.unw = s->unw, .child = &s->child, .at_step = exec_settle_step,
		.python = exec_python_cb, .ctx = s,
	};

	return env;
}

static void target_exec_event(struct pt_session *s, uint64_t ts, uint32_t first_stack)
{
	struct pt_exec_image img = exec_image(s);
	struct pt_exec_env env = exec_env(s);

	pt_exec_event(&s->exec, &env, &img, s->launched, ts, first_stack);
}

/* An exec into another root: settled once its loader mapped an allocator (exec/exec.h). */
static bool exec_settle(struct pt_session *s)
{
	struct pt_exec_image img = exec_image(s);
	struct pt_exec_env env = exec_env(s);
	int r = pt_exec_settle(&s->exec, &env, &img);

	if (r > 0)
		s->need_refresh = true;
	return r >= 0;
}

static bool exec_settle_step(void *arg)
{
	return exec_settle(arg);
}

/* Launch mode: stopped at an exec, before the new image runs; the first is the command's. */
static void at_child_exec(void *arg)
{
	struct pt_session *s = arg;
	struct pt_exec_image img = exec_image(s);
	struct pt_exec_env env = exec_env(s);
	uint64_t t;

	/* The exec event, sent by the kernel just before the stop, is in the ring buffer now: it
	 * says when the hold began. */
	if (s->rb)
		ring_buffer__consume(s->rb);
	t = pt_exec_stop(&s->exec, &env, &img, !(s->child.execs > 1 && s->skel),
			 s->skel ? (uint32_t)s->skel->bss->g.next_stack + 1 : 0);
	s->rep.startup.exec_stops++;
	s->rep.startup.held_ns += now_ns() - t;
}

/* The memory kind of each stack's RSS pages, from the maps now (rss/rss.h). */
static void rss_kinds(struct pt_session *s)
{
	pt_rss_kinds_end(&s->rep.rss, s->pid, &s->skel->bss->rss_g,
			 bpf_map__fd(s->skel->maps.stats), stacks_span(s));
}

/* Launch mode: the child stopped at exit with its mm intact. */

static void at_child_exit(void *arg)
{
	struct pt_session *s = arg;
	uint64_t hwm = pt_proc_vmhwm(s->pid);

	if (s->sym)
		pt_sym_refresh(s->sym);
	if (hwm > s->vmhwm)
		s->vmhwm = hwm;
	if (!s->rep.pyobj.cpu_read)
		pt_pyobj_cpu(&s->rep.pyobj, s->pid, true);
	pt_inv_reading_now(&s->inv);
	collect_arenas(s);
	rss_kinds(s);
}

/* ---- the steps ------------------------------------------------------------------------- */

int pt_preflight(const struct pt_options *opt)
{
	if (geteuid() != 0) {
		fprintf(stderr, "peaktrace: must be run as root (loading BPF programs and uprobes needs "
				"CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN)\n");
		return EXIT_PERM;
	}
	if (opt->outdir)
		return check_outdir(opt->outdir);
	return EXIT_OK;
}

struct pt_session *pt_session_new(const struct pt_options *opt)
{
	struct pt_session *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->opt = opt;
	s->t0_ns = now_ns();
	s->child.go_fd = s->child.report_fd = -1;
	s->waiter.ep = s->waiter.pidfd = s->pyobjects.stats_fd = -1;
	s->rep.inv_stacks.stacks_fd = s->rep.inv_stacks.py_fd = s->rep.inv_stacks.py_chunks_fd = -1;
	verbose = opt->verbose;
	pt_collect_set_frames(opt->frames);
	libbpf_set_print(libbpf_print);
	return s;
}

/* -p PID: is it a process we can trace, and which allocator does it use (target/find.h). */
static int attach_target(struct pt_session *s)
{
	int err = pt_target_pid(s->opt->pid, &s->alloc, s->rep.comm, sizeof(s->rep.comm), s->rep.exe,
				sizeof(s->rep.exe));

	if (err)
		return err == -ESRCH ? EXIT_NO_PROCESS : err == -EPERM ? EXIT_PERM : EXIT_UNSUPPORTED;
	s->pid = s->opt->pid;
	return EXIT_OK;
}

static int load_bpf(struct pt_session *s);

/* A spare (session.h): the BPF programs loaded with no target, then the order read. Returns
 * SPARE_UNUSED at end of file (the coordinator is done with us). */
static int spare_serve(struct pt_session *s)
{
	struct pt_spare *sp = &s->spare;
	int code;

	if ((code = load_bpf(s)) != EXIT_OK)
		return code;
	sp->preloaded = true;
	pt_spare_say(s->opt->ready_fd, PT_SPARE_LOADED);
	if (pt_spare_order_read(s->opt->spare_fd, s->opt, sp))
		return SPARE_UNUSED;
	s->opt = &sp->opt;
	return EXIT_OK;
}

/* -- CMD: which allocator the command will load (target/find.h), then start it, held before
 * exec. */
static int launch_target(struct pt_session *s)
{
	char **cmd = s->opt->cmd, *env[PT_MAX_COMPARE + 1];
	int err;

	err = pt_target_command(cmd[0], &s->exe, &s->paths, &s->npaths, &s->alloc, s->rep.comm,
				sizeof(s->rep.comm), s->rep.exe, sizeof(s->rep.exe));
	if (err)
		return err == -ENOENT ? EXIT_NO_PROCESS : EXIT_UNSUPPORTED;
	err = pt_launch(cmd, env,
			pt_pyobj_command_env(&s->pyobjects, &s->rep.pyobj, env, s->opt->target_env,
					     s->opt->ntarget_env, s->opt->python_objects && !s->opt->light,
					     s->paths, s->npaths, s->exe),
			&s->child);
	if (err) {
		fprintf(stderr, "peaktrace: cannot start %s: %s\n", cmd[0], strerror(-err));
		return EXIT_FAIL;
	}
	s->launched = true;
	s->pid = s->child.pid;
	s->child.at_exec = at_child_exec;
	s->supervised = pt_launch_supervise(s->opt->supervised);
	return EXIT_OK;
}

int pt_session_find_target(struct pt_session *s)
{
	int code, err;

	if (s->opt->spare_fd >= 0 && (code = spare_serve(s)) != EXIT_OK)
		return code;
	/* Which allocator, before anything runs. */
	code = s->opt->pid ? attach_target(s) : launch_target(s);
	if (code != EXIT_OK)
		return code;
	/* CPython in the target: its frames are read in the kernel (python.bpf.h). */
	err = s->launched ? pt_py_detect((const char *const *)s->paths, s->npaths, &s->python.info)
			  : pt_py_detect_pid(s->pid, &s->python.info);
	if (err == 0)
		s->py_found = s->opt->fp_stacks;
	else if (err == -ENOTSUP)
		pt_py_warn(&s->python.info);   /* counted: python_layout_failed */
	s->rep.pyobj.requested = s->opt->python_objects && !s->opt->light;
	if (err == 0)
		pyobj_setup(s, false, s->launched);

	/* Tracepoints are attached by their tracefs ids (attach/attachall.h). */
	pt_tracefs_mount();
	return EXIT_OK;
}

/* The target's host PID (attach/nspid.h), as the BPF programs see it. */
static int host_pid(struct pt_session *s)
{
	int err = pt_host_tgid_target(s->pid, &s->host_pid);

	return !err ? EXIT_OK : err == -ESRCH ? EXIT_NO_PROCESS : EXIT_BPF;
}

/* The glibc arena accounting and the free path's thread lookup, as the allocator needs them. */
static bool wants_arenas(const struct pt_session *s)
{
	return s->opt->arenas && !s->opt->light && s->alloc.kind == PT_ALLOC_GLIBC;
}

static bool wants_free_checks(const struct pt_session *s)
{
	/* --python-objects: PyObject_Free of a block over 512 bytes reaches free() too. */
	return s->opt->python_objects || s->alloc.kind == PT_ALLOC_JEMALLOC ||
	       s->alloc.kind == PT_ALLOC_TCMALLOC || s->alloc.kind == PT_ALLOC_MIMALLOC;
}

/* The probe plan for the allocator found (after the load too, for a spare). */
static int plan_probes(struct pt_session *s)
{
	s->rep.alloc = &s->alloc;
	if (pt_plan_probes(&s->alloc, s->rep.probes, &s->rep.nprobes))
		return EXIT_UNSUPPORTED;
	if (s->opt->light)      /* --light: no probe on the allocator, the report lists none */
		s->rep.nprobes = 0;
	return EXIT_OK;
}

/* The live table's slots: --python-objects sizes its default (python/objects.h). */
static uint32_t pyobj_live_slots(struct pt_session *s)
{
	const struct pt_options *o = s->opt;

	if (!o->python_objects || o->light || o->spare_fd >= 0)
		return o->live_slots;
	return pt_pyobj_table_slots(&s->rep.pyobj, o->live_slots, o->live_slots_set, s->launched, s->pid);
}

/* Between open and load (bpfload.h): rodata, map sizes, the programs to load; the probe plan.
 * A spare has no target yet: its target-dependent settings are the glibc ones (session.h). */
static int configure(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	uint32_t slots = pyobj_live_slots(s);
	int code;

	if (!s->spare.preloaded && o->spare_fd >= 0)
		s->alloc.kind = PT_ALLOC_GLIBC;
	else if ((code = host_pid(s)) != EXIT_OK)
		return code;
	s->skel->bss->targ_tgid = (uint32_t)s->host_pid;
	pt_bpf_configure(s->skel, o, slots, wants_arenas(s), wants_free_checks(s));
	if (o->spare_fd < 0 && (code = plan_probes(s)) != EXIT_OK)
		return code;
	s->timeline.light = o->light;
	/* Uprobe-multi links (6.6+) when the kernel has them; perf-event uprobes otherwise. */
	s->multi = !o->perf_uprobes && pt_kfeat_has(PT_KF_UPROBE_MULTI);
	if (s->multi)
		pt_bpf_use_multi(s->skel);
	return EXIT_OK;
}

/* Open the BPF object, configure it, load it (a spare: without its target). */
static int load_bpf(struct pt_session *s)
{
	uint64_t t = now_ns(), t_load, cpu_load;
	char *vbufs = NULL;
	int code, err;

	s->skel = peaktrace_bpf__open();
	if (!s->skel) {
		fprintf(stderr, "peaktrace: failed to open BPF object: %s\n", strerror(errno));
		return EXIT_BPF;
	}
	if ((code = configure(s)) != EXIT_OK)
		return code;
	/* One process of a sandbox (--follow, several -p): the coordinator's map and our slot. */
	if (s->opt->sandbox_fd >= 0) {
		s->skel->rodata->sbx_on = true;
		s->skel->bss->sbx_slot = (uint32_t)s->opt->sandbox_slot;   /* a spare's: its order's */
		if ((err = bpf_map__reuse_fd(s->skel->maps.sandbox, s->opt->sandbox_fd))) {
			fprintf(stderr, "peaktrace: cannot share the sandbox map: %s\n", strerror(-err));
			return EXIT_BPF;
		}
	}
	if (s->opt->spare_fd >= 0 || s->opt->held)   /* let go before its symbols are read */
		bpf_map__set_max_entries(s->skel->maps.events, SPARE_RINGBUF);
	/* Invocation records stop at three quarters of the ring (bpf/invocation.bpf.h inv_room). */
	s->skel->rodata->rb_inv_room = bpf_map__max_entries(s->skel->maps.events) / 4 * 3;
	if (s->opt->verifier_stats && !(vbufs = pt_vlog_bufs(s->skel)))
		fprintf(stderr, "peaktrace: --verifier-stats: out of memory\n");
	t_load = now_ns();
	cpu_load = pt_process_cpu_ns();
	/* A spare loads beside the others (--follow starts three at once) or beside the processes
	 * it follows, at nice +10: one copy, the least CPU. A session something waits for: two,
	 * when a second core is free to take one. */
	err = pt_bpf_load(s->skel, &s->parts,
			  s->opt->load_parts ? s->opt->load_parts :
			  s->opt->spare_fd >= 0 ? 1 : pt_load_parts_here(), vbufs, PT_VLOG_SIZE);
	if (vbufs && !err)
		pt_verifier_stats_write(s->opt->verifier_stats, s->skel, &s->parts, vbufs, now_ns() - t_load,
					pt_process_cpu_ns() - cpu_load);
	free(vbufs);
	if (err) {
		fprintf(stderr, "peaktrace: failed to load BPF programs: %s%s\n", strerror(-err),
			err == -EPERM ? " (need root)" : " (`peaktrace --check-kernel` says what this kernel "
							 "lacks; -v shows the verifier log)");
		return err == -EPERM ? EXIT_PERM : EXIT_BPF;
	}
	s->rep.startup.bpf_load_ns = now_ns() - t;
	/* Each stack's counters are read at every invocation's end: from memory. */
	err = pt_map_mmap(bpf_map__fd(s->skel->maps.stats), sizeof(struct pt_stack_stats), s->opt->max_stacks);
	if (err)
		fprintf(stderr, "peaktrace: cannot map the stack counters (%s): reading them at each "
				"invocation's end is slower\n", strerror(-err));
	return EXIT_OK;
}

/* A spare's process is known: the settings its programs were loaded with must be the ones its
 * allocator needs; then its PID and slot go into .bss (mmapped: the programs see them at once),
 * before any attach. */
static int spare_target(struct pt_session *s)
{
	struct peaktrace_bpf *skel = s->skel;
	int code;

	if (skel->rodata->glibc_arenas != wants_arenas(s) ||
	    skel->rodata->free_checks_thread != wants_free_checks(s)) {
		pt_spare_say(s->opt->ready_fd, PT_SPARE_UNFIT);   /* the coordinator starts a session of its own */
		return EXIT_UNSUPPORTED;
	}
	if ((code = host_pid(s)) != EXIT_OK || (code = plan_probes(s)) != EXIT_OK)
		return code;
	skel->bss->targ_tgid = (uint32_t)s->host_pid;
	if (s->opt->sandbox_fd >= 0)
		skel->bss->sbx_slot = (uint32_t)s->opt->sandbox_slot;
	/* Last: no report directory for a process this session does not trace. */
	return check_outdir(s->opt->outdir);
}

int pt_session_load(struct pt_session *s)
{
	uint64_t t;
	int code;

	if ((code = s->spare.preloaded ? spare_target(s) : load_bpf(s)) != EXIT_OK)
		return code;
	s->arenas = s->skel->rodata->glibc_arenas;
	/* .eh_frame tables: the target's code now (attach), or what it will load (launch). */
	t = now_ns();
	if (s->skel->rodata->dwarf_unwind) {
		const char *why;
		int e = pt_uwcache_init(&s->unwind_cache, s->opt->cache_dir, s->opt->no_cache, &why);

		if (e)
			fprintf(stderr, "peaktrace: warning: unwind table cache %s not used (%s: %s): "
					"tables are built at every start\n",
				s->opt->cache_dir ? s->opt->cache_dir : PT_UWCACHE_DEFAULT_DIR, why,
				strerror(-e));
	}
	s->unw = pt_unwind_load(s->skel, s->pid, s->launched ? s->paths : NULL, s->npaths,
				&s->unwind_cache, s->opt->fast_start);
	s->rep.startup.unwind_ns = now_ns() - t;
	s->unw_ms0 = pt_unwind_build_ms(s->unw);
	return EXIT_OK;
}

/* The invocation stream (invocation/stream.h): DIR/invocations.jsonl, and the --emf stream
 * (DIR/emf.jsonl or stdout). */
static int open_streams(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	struct pt_inv_stream *st = &s->inv;

	s->invs.keep = o->max_inv_kept;
	s->invs.max_peak = o->max_peak;
	st->list = &s->invs;
	st->skel = s->skel;
	st->pid = s->pid;
	st->max_stacks = o->max_stacks;
	st->per_invocation = o->per_invocation;
	st->sampled = o->sample_bytes;
	st->attached = !s->launched && !o->held;
	st->light = o->light;
	st->quiet = o->quiet;
	st->readings = s->arenas || o->light;
	st->reading = inv_end_reading;
	st->reading_ctx = s;
	return pt_inv_stream_open(st, o->outdir, o->emf, o->max_output, s->launched, s->rep.comm)
	       ? EXIT_OUTPUT : EXIT_OK;
}

/* The allocator's probes and the tracepoints (attach/attachall.h): launched, both at once. */
static int attach_probes(struct pt_session *s)
{
	bool boundaries = s->skel->rodata->rapi_boundaries || s->skel->rodata->rapi_first_start;

	return pt_attach_all(s->skel, &s->links, &s->alloc, s->pid, s->rep.probes, s->rep.nprobes,
			     s->multi, boundaries, s->launched, &s->rep.kernel_cost.uprobe_links);
}

int pt_session_attach(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	struct peaktrace_bpf *skel = s->skel;
	const char *const *paths = (const char *const *)s->paths;
	uint64_t t = now_ns();
	int code;

	pt_bpf_seed(s->skel, s->launched, s->pid);
	if ((code = open_streams(s)) != EXIT_OK)
		return code;
	pt_pyobj_table_start(&s->pyobjects, &s->rep.pyobj, s->pid, s->skel);
	if (!s->launched)
		pt_timeline_start(&s->timeline, &s->skel->bss->g, s->pid, o->timeline_ms);
	if ((skel->rodata->rapi_boundaries || skel->rodata->rapi_first_start) && !s->launched)
		pt_rapi_seed(bpf_map__fd(skel->maps.rapi_fds), s->pid, s->host_pid);
	if (attach_probes(s) ||
	    (o->boundary == BOUNDARY_UPROBE &&
	     pt_attach_boundaries(skel, &s->links, &o->boundary_spec, s->pid, paths, s->npaths,
				  s->launched, o->verbose)) ||
	    (o->boundary == BOUNDARY_AWS &&
	     pt_aws_boundaries(skel, &s->links, s->pid, s->host_pid, paths, s->npaths, s->launched,
			       false, &s->aws_pending)))
		return EXIT_BPF;
	pt_pyobj_attach(&s->pyobjects, &s->rep.pyobj, s->skel, &s->links, s->pid, s->multi);
	s->rep.startup.attach_ns = now_ns() - t;
	s->rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, s, NULL);
	if (!s->rb) {
		fprintf(stderr, "peaktrace: failed to create ring buffer: %s\n", strerror(errno));
		return EXIT_BPF;
	}
	return EXIT_OK;
}

int pt_session_start(struct pt_session *s)
{
	int err;

	pt_stop_signals_catch(second_signal_msg);
	s->start_ns = now_ns();
	if (s->launched) {
		s->rep.startup.before_exec_ns = now_ns() - s->t0_ns;
		err = pt_launch_go(&s->child);
		if (err) {
			fprintf(stderr, "peaktrace: cannot execute %s: %s\n", s->opt->cmd[0], strerror(-err));
			return err == -ENOENT ? EXIT_NO_PROCESS : EXIT_FAIL;
		}
		/* From the exec on: before it, the target was a copy of peaktrace. */
		pt_timeline_start(&s->timeline, &s->skel->bss->g, s->pid, s->opt->timeline_ms);
	} else if (kill(s->pid, 0) && errno == ESRCH) {
		fprintf(stderr, "peaktrace: no such process: %d (it exited while probes were attached)\n",
			s->pid);
		return EXIT_NO_PROCESS;
	}
	pt_sym_perfmap_max(s->opt->perf_map_max);
	s->sym = pt_sym_new(s->pid);
	pt_collect_set_allocator(s->alloc.path);
	s->arena_reading.attach_resident = -1;
	if (!s->launched && s->arenas)
		s->arena_reading.attach_resident = pt_arenas_resident_in_memory(s->pid);
	if (!s->launched) {
		if (!s->opt->held)
			warm_symbolizer(s, false);
		python_locate(s);
		s->node_flags_missing += pt_node_flags_warn(s->pid, s->rep.node_flags_note,
							    sizeof(s->rep.node_flags_note));
	}
	char path[512];

	/* The path is the target's (its maps): escaped like every name it controls. */
	pt_sanitize(path, sizeof(path), s->alloc.path);
	fprintf(stderr, "peaktrace: tracing PID %d (%s) with %s allocator %s%s; %s\n", s->pid, s->rep.comm,
		pt_allocator_kind_name(s->alloc.kind), path, s->opt->light ? " (--light: not probed)" : "",
		s->opt->duration > 0 ? "stops at the end of -d or Ctrl-C" : "Ctrl-C to stop");
	if (s->supervised) {
		pt_stop_pass_to(s->child.pid);
		pt_launch_supervised_say();
	}
	s->started = true;
	if (s->opt->ready_fd >= 0)
		pt_spare_ready(s->opt->ready_fd);   /* a coordinator holds the process until now */
	/* A held image (--follow) is let go first: its symbols (its program, ld.so, libc: what
	 * is mapped at the hold, 70-130 ms to read here for python3) are read while it runs, as
	 * those of everything it maps later are; its events meanwhile wait in the ring buffer,
	 * larger for a spare's sessions (SPARE_RINGBUF). */
	if (!s->launched && s->opt->held)
		warm_symbolizer(s, true);
	return EXIT_OK;
}

/* The loop's sleep: 10 ms while RSS kinds wait to be read, 20 while an arena reading is due,
 * else 100; never past the end of -d. */
static int poll_timeout(const struct pt_session *s, uint64_t now)
{
	int ms = pt_rss_pending(&s->rep.rss) ? 10 : s->inv.reading_due ? 20 : 100;

	if (s->opt->duration > 0) {
		uint64_t end = s->start_ns + (uint64_t)(s->opt->duration * 1e9);
		uint64_t left = end > now ? (end - now + 999999) / 1000000 : 0;

		if (left < (uint64_t)ms)
			ms = (int)left;
	}
	return ms;
}

void pt_session_poll(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	uint64_t last_status, last_allocs = 0, last_refresh;
	bool tty = isatty(STDERR_FILENO) && o->interval > 0;
	int err;

	last_status = last_refresh = now_ns();
	pt_waiter_setup(&s->waiter, ring_buffer__epoll_fd(s->rb), s->launched, s->pid);
	while (!pt_stop_signal()) {
		uint64_t now;

		/* After new Python stacks (or RSS stacks), a short wait: the kernel wakes this loop
		 * for them at most once a millisecond (bpf/state.bpf.h ev_burst_wake_flags), so the
		 * last ones of a burst are taken after this timeout while their code objects (their
		 * pages) are still there. Records nobody was woken for make no epoll event:
		 * pt_waiter_wait takes them (a consume, not a poll). */
		bool burst = s->burst_events;

		s->burst_events = false;
		err = pt_waiter_wait(&s->waiter, s->rb, burst ? 1 : poll_timeout(s, now_ns()));
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "peaktrace: ring buffer poll failed: %s\n", strerror(-err));
			break;
		}
		pt_rss_poll(&s->rep.rss, s->pid, &s->skel->bss->rss_g, !s->exited);
		flush_invocations(s);
		python_check(s);
		now = now_ns();
		if (s->launched && pt_child_poll(&s->child, at_child_exit, s)) {
			s->exited = true;
			pt_stop_pass_to(0);   /* reaped: its pid may name another process */
		}
		if (s->child.gave_up) {   /* stepped past its loader: no allocator we know mapped */
			pt_exec_unsettled(&s->exec, &s->rep.execs);
			s->child.gave_up = false;
		}
		/* Attached, an exec into another root: probed as soon as its loader mapped it, the
		 * time before said (window_ns); given up after 5 s. */
		if (s->exec.pending && !s->launched && !exec_settle(s) &&
		    now - s->exec.pending_ns > 5000000000ULL)
			pt_exec_unsettled(&s->exec, &s->rep.execs);
		if (s->need_refresh && s->sym && !s->exited) {
			/* Boundaries first: the rest (symbols, unwind tables of new code) can take
			 * long enough for the runtime to reach its first get_next meanwhile. */
			if (s->aws_pending)
				pt_aws_boundaries(s->skel, &s->links, s->pid, s->host_pid, NULL, 0,
						  s->launched, true, &s->aws_pending);
			/* Then what the kernel's stacks need, before the symbols (needed only to name
			 * stacks). */
			python_locate(s);
			pt_unwind_refresh(s->unw);
			pt_sym_refresh(s->sym);
			s->need_refresh = false;
			last_refresh = now;
		}
		if (s->exited)
			break;
		if (!s->launched && (s->waiter.exited || (kill(s->pid, 0) && errno == ESRCH))) {
			s->exited = true;
			break;
		}
		if (now - last_refresh > 2000000000ULL && s->sym) {
			/* Periodic refresh also keeps VmHWM: after exit /proc has neither. */
			uint64_t hwm = pt_proc_vmhwm(s->pid);

			pt_sym_refresh(s->sym);
			if (hwm > s->vmhwm)
				s->vmhwm = hwm;
			last_refresh = now;
		}
		if (tty && now - last_status >= (uint64_t)(o->interval * 1e9))
			pt_status_line(&s->skel->bss->g, &last_allocs, &last_status);
		if (o->duration > 0 && now - s->start_ns >= (uint64_t)(o->duration * 1e9))
			break;
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	if (s->aws_pending)
		fprintf(stderr, "peaktrace: --boundary uprobe: aws-lambda-cpp was never mapped: no invocation "
				"boundaries were seen\n");
}

void pt_session_stop(struct pt_session *s)
{
	pt_exec_unsettled(&s->exec, &s->rep.execs);

	if (s->opt->prog_stats)
		pt_prog_stats_write(s->opt->prog_stats, s->skel);
	pt_pyobj_cost(&s->rep.pyobj, s->skel);
	if (!s->exited && !s->rep.pyobj.cpu_read)
		pt_pyobj_cpu(&s->rep.pyobj, s->pid, true);
	/* Stop: final state of a still-running target first, then freeze the counters. */
	s->rep.duration_ns = now_ns() - s->start_ns;
	if (s->exited && s->sym) {
		/* A JIT runtime's perf map has grown since the last refresh (up to 2 s ago): the
		 * code a short-lived node script compiled last is often what allocated. The file
		 * outlives the process (/tmp/perf-PID.map); the mappings stay cached. */
		pt_sym_refresh(s->sym);
	}
	if (!s->exited) {
		uint64_t hwm = pt_proc_vmhwm(s->pid);

		if (s->sym)
			pt_sym_refresh(s->sym);
		if (hwm > s->vmhwm)
			s->vmhwm = hwm;
	}
	/* A live target stops paying for the probes now (the tracepoints' events, whose closes
	 * wait ~35 ms each, are closed in the background while the report is made). For one that
	 * has exited nothing more can arrive: every detach (grace periods) runs in the background
	 * meanwhile; pt_session_free waits for it. */
	pt_links_stop(&s->links, s->exited);
	/* Every record left, woken for or not (bpf/state.bpf.h ev_burst_wake_flags). */
	ring_buffer__consume(s->rb);
	if (s->launched) {
		pt_child_release(&s->child);
		if (pt_child_poll(&s->child, at_child_exit, s))
			pt_stop_pass_to(0);
	}
	{
		struct pt_inv_target t = inv_target(s);

		pt_inv_reading_now(&s->inv);
		pt_inv_close_running(&s->inv, &t);
	}
	flush_invocations(s);
	/* What --max-output cut of the streams, for the reports. */
	pt_inv_stream_account(&s->inv, &s->rep.out);
	/* timeline.jsonl is complete and closed before any report is written (report.html reads
	 * it). */
	s->tl_err = pt_timeline_finish(&s->timeline, s->opt->outdir, &s->invs);
}

/* The report's figures that need no symbolizing (report/figures.c): the target, the kernel's
 * totals and counters. */
static void report_figures(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	struct pt_report_from f = {
		.pid = s->pid, .launched = s->launched, .multi = s->multi, .exited = s->exited,
		.exit_code = s->exit_code, .child_exited = s->child.exited, .child_status = s->child.status,
		.vmhwm = s->vmhwm, .hiwater = s->hiwater, .skel = s->skel,
		.bpf_maps_bytes = pt_maps_memlock(s->skel->obj), .invs = &s->invs, .inv_src = inv_src(s),
		.aws_pending = s->aws_pending,
		.unwind_later_ns = (uint64_t)((pt_unwind_build_ms(s->unw) - s->unw_ms0) * 1e6),
		.unwind_cache = &s->unwind_cache, .arenas = &s->arena_reading, .alloc_kind = s->alloc.kind,
		.timeline = &s->timeline,
		.top = o->top, .json_stacks = o->json_stacks, .max_stacks = o->max_stacks,
		.light = o->light, .compare_run = o->compare_child,
		.unwind = !o->fp_stacks ? "none" : o->dwarf ? "dwarf" : "fp",
		.boundary = o->boundary == BOUNDARY_AUTO ? "runtime-api (auto)" : pt_boundary_names[o->boundary],
		.max_peak = o->max_peak, .sample_bytes = o->sample_bytes,
	};

	collect_arenas(s);
	pt_report_figures(&s->rep, &f);
}

/* Leaks across invocations (invocation/leaked.h): the live table by invocation of origin. */
static void leaks_read(struct pt_session *s)
{
	struct pt_leaked *l = &s->rep.leaked;

	if (!s->invs.n)
		return;
	pt_leaked_read(l, bpf_map__fd(s->skel->maps.live), bpf_map__max_entries(s->skel->maps.live),
		       bpf_map__fd(s->skel->maps.live_overflow), &s->invs, s->opt->sample_bytes, s->nstacks);
	s->collect_in.leaked = (const int64_t (*)[2])l->by_stack;
	s->collect_in.stack_out = l->stack_of;
}

int pt_session_collect(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	struct pt_report *rep = &s->rep;
	struct pt_python_bpf pyb = python_bpf(s);
	int err;

	report_figures(s);
	s->nstacks = stacks_span(s);
	err = pt_stack_table_read(s->skel->maps.stacks, s->nstacks, &s->stacks_map);
	if (err) {
		fprintf(stderr, "peaktrace: cannot read stack tables: %s\n", strerror(err ? -err : errno));
		return EXIT_FAIL;
	}
	s->collect_in.stacks = &s->stacks_map;
	s->collect_in.stats = NULL;	/* read by batches from the map, never copied whole */
	s->collect_in.stats_fd = bpf_map__fd(s->skel->maps.stats);
	s->collect_in.nstacks = s->nstacks;
	rss_kinds(s);
	s->collect_in.rss_kind = pt_rss_stack_kinds(&rep->rss, s->nstacks);
	pt_rss_collect(&rep->rss, bpf_map__fd(s->skel->maps.rss_objs));
	s->collect_in.peak_seq = rep->totals.peak_seq;
	s->collect_in.rss_peak_seq = rep->rss.kernel.peak_seq;
	s->collect_in.count_shift = o->sample_bytes ? PT_SAMPLE_COUNT_SHIFT : 0;
	s->collect_in.py = NULL;
	s->collect_in.py_res = s->python.res;
	s->collect_in.cstats = &s->collect_stats;
	if (s->py_found)
		s->collect_in.py = pt_python_collect(&s->python, &s->stacks_map, s->nstacks, &pyb);
	leaks_read(s);
	err = pt_collect(&s->collect_in, s->sym, &rep->prof, &rep->mstacks, &rep->nmstacks);
	if (pt_stack_table_failed(&s->stacks_map))
		fprintf(stderr, "peaktrace: %" PRIu64 " stack table entries could not be read: their "
				"allocations are under [unknown stack]\n", pt_stack_table_failed(&s->stacks_map));
	rep->errors[PT_ERR_PY_UNMATCHED] += s->collect_stats.py_unmatched;
	rep->execs.unnamed_stacks = s->collect_stats.exec_unnamed;
	rep->errors[PT_ERR_PY_CODE] += pt_py_unreadable(s->python.res);
	rep->errors[PT_ERR_PY_LAYOUT] += s->python.info.lost;
	rep->errors[PT_ERR_NODE_FLAGS] += s->node_flags_missing;
	rep->errors[PT_ERR_PERF_MAP_CUT] += pt_perf_map_note_fill(&rep->perf_map, s->sym);
	if (err) {
		fprintf(stderr, "peaktrace: cannot build the profile: %s\n", strerror(-err));
		return EXIT_FAIL;
	}
	rep->prof.duration_ns = rep->duration_ns;
	/* The tracer's own footprint, for the report (its peak is reached by now). */
	rep->tracer_vmhwm = pt_proc_vmhwm(getpid());
	rep->prof.time_ns = (uint64_t)time(NULL) * 1000000000ULL - rep->duration_ns;
	return EXIT_OK;
}

int pt_session_report(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	int code = EXIT_OK, err;

	/* First, so the reports can say what --max-output left out of them. */
	if (o->outdir && o->per_invocation)
		pt_inv_graphs_write(o->outdir, &s->invs, &s->collect_in, s->sym, s->rep.comm, &s->rep.out);
	if (!o->quiet)
		pt_report_text(stdout, &s->rep);
	if (o->outdir) {
		err = pt_report_write_dir(o->outdir, &s->rep);
		if (err) {
			fprintf(stderr, "peaktrace: failed to write reports to %s: %s\n", o->outdir,
				strerror(-err));
			code = EXIT_OUTPUT;
		} else {
			fprintf(stderr, "peaktrace: reports written to %s/\n", o->outdir);
		}
	}
	if (s->tl_err)
		code = EXIT_OUTPUT;
	if (o->summary && (err = pt_summary_write(o->summary, &s->rep)))
		fprintf(stderr, "peaktrace: cannot write %s: %s\n", o->summary, strerror(-err));
	if (o->max_peak)
		code = pt_inv_max_peak(&s->invs, o->max_peak, code, EXIT_MAX_PEAK);
	if (s->launched && !s->child.exited && o->duration > 0 && !s->supervised) {
		/* -d on a launched command: it was started for tracing only (under a supervisor
		 * it is the supervisor's runtime: pt_session_end). */
		kill(s->child.pid, SIGTERM);
	}
	return code;
}

int pt_session_end(struct pt_session *s, int code)
{
	struct pt_child child;

	if (code == SPARE_UNUSED)
		code = EXIT_OK;   /* a spare no process needed: nothing written */
	if (!s || !s->supervised || !s->started) {
		pt_session_free(s);
		return code;
	}
	/* Everything of the trace is gone before the wait (probes, maps, the tracer's memory, in
	 * the supervisor's memory limit too); the command's end becomes ours. */
	child = s->child;
	pt_session_free(s);
	malloc_trim(0);
	return pt_child_stay_parent(&child, code);
}

void pt_session_free(struct pt_session *s)
{
	if (!s)
		return;
	/* A launched command that still runs is left running, detached (like a target of -p). */
	if (s->launched && s->child.go_fd >= 0)
		pt_launch_abort(&s->child);
	pt_links_detach(&s->links);
	ring_buffer__free(s->rb);
	pt_waiter_close(&s->waiter);
	pt_python_free(&s->python);
	pt_pyobjects_free(&s->pyobjects);
	pt_stack_table_free(&s->stacks_map);
	pt_unwind_free(s->unw);
	pt_uwcache_close(&s->unwind_cache);
	if (s->skel)
		pt_map_munmap(bpf_map__fd(s->skel->maps.stats));
	peaktrace_bpf__destroy(s->skel);
	pt_bpf_parts_free(&s->parts);
	if (s->sym)
		pt_sym_free(s->sym);
	pt_report_free(&s->rep);
	pt_inv_stream_close(&s->inv);
	pt_timeline_free(&s->timeline);
	pt_inv_list_free(&s->invs);
	pt_allocator_free(&s->alloc);
	if (s->paths)
		pt_strv_free(s->paths, s->npaths);
	free(s->exe);
	free(s);
}
