// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * session.c — one tracing session: the target, the BPF object and its links, the event loop,
 * the invocations as they end, and the report once tracing stops. main() calls the steps in
 * order (session.h); pt_session_free() is the one cleanup path.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include "util/fmt.h"
#include "util/stop.h"
#include "util/outdir.h"
#include "util/wake.h"
#include "bpf/peaktrace.h"
#include "bpf/sample.h"
#include "bpf/inv.h"
#include "bpf/rapi.h"
#include "peaktrace.skel.h"
#include "bpfload.h"
#include "target/launch.h"
#include "target/procmaps.h"
#include "attach/links.h"
#include "profile/mapread.h"
#include "attach/nspid.h"
#include "attach/probes.h"
#include "attach/umulti.h"
#include "unwind/unwind_maps.h"
#include "unwind/uwcache.h"
#include "symbolize/symbolize.h"
#include "profile/collect.h"
#include "python/python.h"
#include "python/pyalloc.h"
#include "target/nodeflags.h"
#include "arenas/arenas.h"
#include "invocation/invocation.h"
#include "invocation/boundary.h"
#include "report/report.h"
#include "rss/rss.h"
#include "compare/compare.h"
#include "timeline/timeline.h"
#include "kernel/features.h"
#include "cli.h"
#include "session.h"
#include "target/proc.h"

struct pt_session {
	const struct pt_options *opt;
	/* A spare session (session.h): the options with the order's process, slot and directory;
	 * preloaded once its BPF object is loaded without a target. */
	struct pt_options spare_opt;
	char spare_dir[4096];
	bool preloaded;
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
	/* The poll loop's own epoll set (pt_session_poll): the ring buffer's epoll fd and what
	 * wakes on the target's state changes: SIGCHLD's signalfd for a launched command (its
	 * ptrace stops and exit), a pidfd for an attached one (its exit). -1 until the loop. */
	int wake_ep;
	int pidfd;
	int stats_fd;            /* --python-objects: BPF run-time statistics on while open */
	bool pidfd_exited;       /* the pidfd said so: every thread has exited (a zombie, maybe) */
	struct pt_unwinder *unw;
	struct pt_uwcache uwc;   /* unwind tables by build id across runs */
	struct pt_symbolizer *sym;
	uint64_t start_ns;
	uint64_t t0_ns;          /* peaktrace's start (pt_session_new): start-up figures from here */
	double unw_ms0;          /* unwind table work done before the target ran, ms */
	uint64_t exec_ev_ns;     /* kernel time of the last exec event not yet matched to its stop */
	/* invocations */
	struct pt_inv_list invs;
	/* An exec into another root (chroot, container): its allocator and CPython are read from
	 * its maps once its loader has mapped them (exec_settle); the note it fills. */
	bool exec_pending;
	uint32_t exec_pending_note;
	uint64_t exec_pending_ns;
	char start_id[2][PT_RAPI_COPY + 1];  /* request id read from each START, by parity */
	uint64_t start_ts[2];                /* each START event's time, by parity */
	/* The last PT_EV_INV_RECORD (its PT_EV_INV_END comes next): the ended invocation's figures
	 * as they were at its end, whatever started since. ended.seq says whose. */
	struct pt_inv ended;
	bool ended_ok;
	FILE *jsonl;             /* DIR/invocations.jsonl, one line per finished invocation */
	FILE *emf;               /* --emf output */
	char function_name[128]; /* AWS_LAMBDA_FUNCTION_NAME of the target, for EMF */
	uint32_t written;        /* invocations already printed and streamed */
	/* CPython in the target (python.h): found before load; located (runtime address known to
	 * BPF) once its object is mapped; frame names read as new stacks appear. */
	bool py_found;
	bool burst_events;      /* PT_EV_PY_STACK, PT_EV_RSS_STACK records taken since the last poll */
	struct pt_py_info py;
	uint64_t node_flags_missing;   /* node images without the perf-map flags (warned) */
	struct pt_py_resolver *py_res;
	/* --python-objects: the probed CPython's entry points; the PYTHONMALLOC a launched
	 * command starts with (decided before it runs) */
	struct pt_pyalloc pyalloc;
	char launch_pymalloc[32];
	/* glibc arenas */
	bool arenas;             /* accounting on */
	struct pt_arenas ar;     /* read at the target's exit stop (launch mode), else at the end */
	/* The arenas are read a moment after an invocation ends (ARENA_SETTLE_NS), when the
	 * runtime has freed what it sent and waits for its next event: invs.r[arena_rec]. */
	uint64_t arena_due;      /* 0: no reading pending */
	uint32_t arena_rec;
	/* collected once tracing stops */
	struct pt_report rep;
	struct pt_stack_table stacks_map;  /* the kernel's stack table [0, nstk), compacted */
	uint32_t nstk;
	struct pt_py_stack **py_words;
	struct pt_collect_in cin;
	struct pt_collect_stats cstats;
	struct pt_timeline tl;   /* memory over time (report/timeline.h) */
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

/* comm and exe are the target's to choose (prctl(PR_SET_NAME), the file name it runs): they
 * reach the terminal (stderr, report.txt) sanitized like every name in the profile. The
 * escaped comm (15 bytes, 60 escaped) fits; an exe path too long once escaped is cut. */
static void sanitize_names(struct pt_report *rep)
{
	char tmp[sizeof(rep->exe)];

	snprintf(tmp, sizeof(tmp), "%s", rep->comm);
	pt_sanitize(rep->comm, sizeof(rep->comm), tmp);
	snprintf(tmp, sizeof(tmp), "%s", rep->exe);
	pt_sanitize(rep->exe, sizeof(rep->exe), tmp);
}

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

#define PF_KTHREAD 0x00200000

static int check_pid(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long flags = 0;
	int fd, i;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "peaktrace: no such process: %d\n", pid);
		return EXIT_NO_PROCESS;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0) {
		fprintf(stderr, "peaktrace: no such process: %d\n", pid);
		return EXIT_NO_PROCESS;
	}
	buf[n] = 0;
	/* Field 9 (flags) counted after the ")" that ends comm, which may contain spaces. */
	p = strrchr(buf, ')');
	for (i = 0; p && i < 7; i++)
		p = strchr(p + 1, ' ');
	if (p)
		flags = strtoul(p + 1, NULL, 10);
	if (flags & PF_KTHREAD) {
		fprintf(stderr, "peaktrace: PID %d is a kernel thread: it has no user-space heap to trace\n",
			pid);
		return EXIT_UNSUPPORTED;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d", pid, pid);
	if (access(path, F_OK)) {
		fprintf(stderr, "peaktrace: %d is a thread, not a process: use its process ID\n", pid);
		return EXIT_UNSUPPORTED;
	}
	return EXIT_OK;
}

/* Made if absent, checked and held open (util/outdir.h): every output is created through it. */
static int check_outdir(const char *dir)
{
	return pt_outdir_prepare(dir) ? EXIT_OUTPUT : EXIT_OK;
}

/* ---- events and invocations ---------------------------------------------------------- */

#define ARENA_SETTLE_NS 50000000ULL

/* Malloc heap and pymalloc arenas resident at an invocation's end, from the target's mappings
 * (arenas/resident.h): no kernel tables, so --light has them too. User space, after the
 * boundary: the target runs on. */
static void resident_reading(struct pt_session *s, struct pt_inv_record *rec)
{
	pt_rss_inv_resident(rec, s->pid, s->py_found);
}

/* The record whose end reading is pending, no longer pending (NULL: none). */
static struct pt_inv_record *arena_pending(struct pt_session *s)
{
	if (!s->arena_due)
		return NULL;
	s->arena_due = 0;
	return s->arena_rec < s->invs.n ? &s->invs.r[s->arena_rec] : NULL;
}

/* The next invocation began (at start_ts) before the pending reading was due: it is not taken.
 * Reading smaps and the arenas now would run beside that invocation and slow it (the mappings'
 * walk holds the target's mmap lock and takes a core: a 5 ms Node invocation took 1.5 ms
 * longer under --light); the record says so instead (reading_skipped, next_gap_ns). */
static void arena_skip(struct pt_session *s, uint64_t start_ts)
{
	struct pt_inv_record *rec = arena_pending(s);

	if (!rec)
		return;
	/* The row since attaching, ended by this start itself (the runtime already waited for its
	 * first event): there was no moment between the two to read in, so nothing was skipped. */
	if (rec->seq == 0 && rec->attached && rec->outcome == PT_OUT_INIT && start_ts >= rec->end_ns &&
	    start_ts - rec->end_ns < 1000000)
		return;
	rec->reading_skipped = true;
	rec->next_gap_ns = start_ts > rec->end_ns ? start_ts - rec->end_ns : 0;
}

/* The pending invocation's arena figures and resident memory by allocator, now (its record
 * then may be printed). */
static void arena_reading(struct pt_session *s)
{
	struct pt_inv_record *rec = arena_pending(s);

	if (!rec)
		return;
	resident_reading(s, rec);
	if (!s->arenas ||
	    pt_arenas_totals(s->pid, bpf_map__fd(s->skel->maps.arenas), &s->skel->bss->g,
			     &rec->arena_live, &rec->arena_resident, &rec->arena_retained))
		return;
	rec->arena_read = true;
	/* Against the last invocation that was measured. */
	for (uint32_t k = s->arena_rec; k-- > 0;) {
		if (s->invs.r[k].arena_read) {
			rec->arena_retained_change = rec->arena_retained - s->invs.r[k].arena_retained;
			break;
		}
	}
}

static void collect_arenas(struct pt_session *s)
{
	if (!s->arenas || s->ar.collected)
		return;
	s->ar.from_start = s->launched;
	s->ar.invocations = s->invs.total_inv;   /* kept in memory or not */
	pt_arenas_collect(&s->ar, s->pid, bpf_map__fd(s->skel->maps.arenas),
			  bpf_map__fd(s->skel->maps.thread_slots), &s->skel->bss->g);
}

/* Stack indexes to read: the whole stacks' part of the table as far as it was used, and the
 * cut stacks' parts (pt_tier_start) when they were used. */
static uint32_t stacks_span(const struct pt_session *s)
{
	uint32_t max = s->opt->max_stacks, inner = pt_tier_start(max, PT_TIER_INNER);
	uint32_t leaf = pt_tier_start(max, PT_TIER_LEAF);
	uint64_t whole = s->skel->bss->g.next_stack + 1, in = s->skel->bss->tier_next[PT_TIER_INNER];

	if (s->skel->bss->tier_next[PT_TIER_LEAF])
		return max;
	if (in)
		return inner + (uint32_t)(in < leaf - inner ? in : leaf - inner);
	return whole < inner ? (uint32_t)whole : inner;
}

/* rec's stacks were read, or would be, while its half of the stacks' counters was reused. */
static void inv_stacks_lost(struct pt_inv_record *rec)
{
	free(rec->all);
	free(rec->rss_all);
	rec->all = rec->rss_all = NULL;
	rec->nall = rec->nrss_all = rec->ntop = rec->nrss_top = 0;
	rec->other_stacks = 0;
	rec->other_bytes = rec->other_count = 0;
	rec->stacks_lost = true;
}

/* --max-invocations-kept: the records no longer needed by position (written, and not awaiting
 * their end reading) let go of but for the report's (invocation.h), the indexes into them
 * moved down with them. */
static void inv_trim(struct pt_session *s)
{
	uint32_t hi = s->written, gone;

	if (s->arena_due && s->arena_rec < hi)
		hi = s->arena_rec;
	if (!(gone = pt_inv_list_trim(&s->invs, hi)))
		return;
	s->written -= gone;
	if (s->arena_rec >= gone)
		s->arena_rec -= gone;
}

/* A request id BPF kept only the first PT_REQID_LEN bytes of (its POST line's id was longer):
 * the whole one from the answer to "next" when it is the same id (length, hash and those bytes,
 * bpf/rapi.h); else the part kept, followed by "...". */
static void inv_whole_id(struct pt_session *s, struct pt_inv_record *rec, const struct pt_inv *inv)
{
	const char *st = s->start_id[inv->seq & 1];
	size_t n = strlen(st);
	uint64_t h = PT_RAPI_HASH0;

	if (inv->id_full_len <= PT_REQID_LEN || inv->id_len < PT_REQID_LEN)
		return;
	for (size_t i = 0; i < n; i++)
		h = pt_rapi_hash_step(h, (unsigned char)st[i]);
	if (n == inv->id_full_len && h == inv->id_hash && !memcmp(st, inv->id, PT_REQID_LEN))
		snprintf(rec->id, sizeof(rec->id), "%s", st);
	else
		snprintf(rec->id + PT_REQID_LEN, sizeof(rec->id) - PT_REQID_LEN, "...");
}

/* An invocation (or the init phase) ended: its figures from its PT_EV_INV_RECORD, else from its
 * half of the double buffer, and its stacks from the stats map now. */
static void invocation_ended(struct pt_session *s, uint64_t seq, uint64_t end_ts)
{
	volatile struct pt_global *g = &s->skel->bss->g;
	const struct pt_inv *inv = s->ended_ok && s->ended.seq == seq ? &s->ended : &s->skel->bss->g.inv[seq & 1];
	uint64_t rss_seq = s->skel->bss->rss_g.inv_peak_seq[seq & 1];
	uint32_t nstk = stacks_span(s);
	struct pt_inv_record rec;
	uint64_t hwm_end;
	/* Its stacks' snapshots at its peak are in its half of each stack's counters until the
	 * invocation after next starts (bpf/heap.bpf.h): then they are not read at all, which
	 * also lets a loop that fell behind (~20 ms a read at 115k stacks) catch up. */
	bool behind = g->inv_seq >= seq + 2;
	int stats_fd = behind ? -1 : bpf_map__fd(s->skel->maps.stats);

	s->ended_ok = false;
	pt_inv_capture(&rec, inv, stats_fd, nstk, s->opt->per_invocation,
		       s->opt->sample_bytes ? PT_SAMPLE_COUNT_SHIFT : 0);
	pt_inv_capture_rss(&rec, rss_seq, stats_fd, nstk, s->opt->per_invocation);
	if (behind || g->inv_seq >= seq + 2)
		inv_stacks_lost(&rec);
	inv_whole_id(s, &rec, inv);
	hwm_end = inv->hwm_end;
	/* No record event (the ring buffer was full), and two more invocations began before we
	 * got here: the buffer holds a newer one. */
	if (inv->seq != seq) {
		hwm_end = 0;
		free(rec.all);
		memset(&rec, 0, sizeof(rec));
		rec.seq = seq;
		rec.overwritten = true;
		/* Its figures are lost, not its times: the ring buffer's START and END events keep
		 * them, for invocations.jsonl. */
		rec.start_ns = s->start_ts[seq & 1];
		rec.end_ns = end_ts;
		/* And its epochs, which place blocks (invocation/leaks.c): every invocation, the init
		 * phase (0, seeded at epoch 1) included, takes exactly one bump when it starts and
		 * one when it ends (bpf/invocation.bpf.h: inv_start ends the one before if needed). */
		rec.start_epoch = 2 * seq + 1;
		rec.end_epoch = 2 * seq + 2;
		if (s->invs.n) {   /* its START event lost too: no earlier than the record before */
			const struct pt_inv_record *prev = &s->invs.r[s->invs.n - 1];

			if (rec.start_ns < prev->start_ns)
				rec.start_ns = prev->end_ns ? prev->end_ns : prev->start_ns;
		}
	}
	if (!rec.id[0] && seq)
		snprintf(rec.id, sizeof(rec.id), "%s", s->start_id[seq & 1]);
	rec.attached = !s->launched && !s->opt->held;
	rec.light = s->opt->light;
	/* The kernel closes the invocation the process ended in after the exit event (bpf/
	 * process.bpf.h), so the exit code is known here: a signal killed it, or it exited. */
	if (s->exited)
		pt_inv_exit_outcome(&rec, s->exit_code);
	rec.vmhwm = pt_proc_vmhwm(s->pid);
	if (rec.vmhwm < hwm_end)
		rec.vmhwm = hwm_end;      /* the mark at its end, whatever happened since */
	if (rec.vmhwm < s->hiwater)
		rec.vmhwm = s->hiwater;   /* the process is gone: its mm's mark at exit */
	if (rec.vmhwm < (uint64_t)rec.rss_end)
		rec.vmhwm = rec.rss_end;    /* VmHWM is never below the RSS of the moment */
	if (rec.vmhwm < s->vmhwm)
		rec.vmhwm = s->vmhwm;
	else
		s->vmhwm = rec.vmhwm;
	arena_reading(s);   /* the previous one, if still pending */
	inv_trim(s);
	if (pt_inv_append(&s->invs, &rec) == 0 && (s->arenas || s->opt->light)) {
		s->arena_rec = s->invs.n - 1;
		s->arena_due = now_ns() + ARENA_SETTLE_NS;
	}
}

/* Where per-invocation stacks are named: with the target's Python frames when it runs CPython. */
static struct pt_stack_src inv_src(struct pt_session *s)
{
	struct pt_stack_src src = {
		.stacks_fd = bpf_map__fd(s->skel->maps.stacks),
		.py_fd = s->py_found ? bpf_map__fd(s->skel->maps.py_stacks) : -1,
		.py_chunks_fd = s->py_found ? bpf_map__fd(s->skel->maps.py_chunks) : -1,
		.py = s->py_res,
		.sym = s->sym,
	};

	return src;
}

/* --max-output: room for another line in DIR's streams, else *cut counted (the line not written). */
static bool out_room(struct pt_session *s, uint64_t *cut)
{
	if (!s->rep.out.cap || s->rep.out.used < s->rep.out.cap)
		return true;
	(*cut)++;
	return false;
}

/* The streams' bytes so far, for out_room (the per-invocation graphs come after them). */
static void out_count(struct pt_session *s)
{
	long a = s->jsonl ? ftell(s->jsonl) : 0, b = s->emf && s->emf != stdout ? ftell(s->emf) : 0;

	s->rep.out.used = (a > 0 ? (uint64_t)a : 0) + (b > 0 ? (uint64_t)b : 0);
}

/*
 * Print and stream the invocations captured since the last call. Kept out of the event callback:
 * symbolizing can take a while (a large binary's first lookup), and the kernel keeps only two
 * invocations, so every pending end is captured first and written afterwards.
 */
static void flush_invocations(struct pt_session *s)
{
	if (s->arena_due && now_ns() >= s->arena_due)
		arena_reading(s);
	for (; s->written < s->invs.n && !(s->arena_due && s->written >= s->arena_rec);
	     s->written++) {
		const struct pt_inv_record *rec = &s->invs.r[s->written];

		if (rec->seq && !s->opt->quiet) {
			fputs("peaktrace: ", stderr);
			pt_inv_line(stderr, rec);
		}
		if (s->jsonl && out_room(s, &s->rep.out.jsonl_cut)) {
			{
				struct pt_stack_src src = inv_src(s);

				pt_inv_json(s->jsonl, rec, &src);
			}
			fputc('\n', s->jsonl);
			fflush(s->jsonl);
			out_count(s);
		}
		if (s->emf && rec->seq && (s->emf == stdout || out_room(s, &s->rep.out.emf_cut))) {
			struct timespec now;

			clock_gettime(CLOCK_REALTIME, &now);
			pt_inv_emf(s->emf, rec, s->function_name,
				   (uint64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000);
			fputc('\n', s->emf);
			fflush(s->emf);
			out_count(s);
		}
	}
	inv_trim(s);
}

/* Tell BPF where _PyRuntime is, once the object defining it is mapped (after exec in launch
 * mode), and start reading code objects from the current image. */
static void python_locate(struct pt_session *s)
{
	struct pt_py_offsets *o = &s->skel->bss->py_off;

	if (!s->py_found || o->runtime || s->py.lost || pt_py_locate(s->pid, &s->py))
		return;
	/* Offsets that fail on the live target are not used (python_check retries while the
	 * interpreter is not up yet). */
	if (pt_py_check_live(s->pid, &s->py) == -EPROTO) {
		pt_py_warn(&s->py);
		return;
	}
	s->py_res = pt_py_resolver_new(s->pid, &s->py);
	/* Offsets first, the address last: the walk starts when it sees a runtime. */
	*o = s->py.off;
	o->runtime = 0;
	__atomic_store_n(&o->runtime, s->py.off.runtime, __ATOMIC_RELEASE);
	if (s->opt->verbose) {
		char path[512];

		pt_sanitize(path, sizeof(path), s->py.path);
		fprintf(stderr, "peaktrace: CPython 3.%u in %s: _PyRuntime at 0x%" PRIx64 "\n",
			s->py.minor, path, (uint64_t)s->py.off.runtime);
	}
}

/* Until the offsets have been checked on the live target (launch mode: the interpreter
 * initializes after the probes are set), check again; a failure stops the walk, said once. */
static void python_check(struct pt_session *s)
{
	int err;

	if (!s->py_found || s->py.check || s->py.lost || !s->skel->bss->py_off.runtime)
		return;
	err = pt_py_check_live(s->pid, &s->py);
	if (!err && s->opt->verbose)
		fprintf(stderr, "peaktrace: CPython 3.%u offsets (%s) checked on the live target\n",
			s->py.minor, s->py.from_debug ? "its _Py_DebugOffsets" : "table");
	if (err != -EPROTO)
		return;
	__atomic_store_n(&s->skel->bss->py_off.runtime, 0, __ATOMIC_RELEASE);
	pt_py_warn(&s->py);
}

/* A new stack with Python frames: read its code objects while the target holds them. */
static void python_new_stack(struct pt_session *s, uint32_t idx)
{
	struct pt_py_stack ps;
	struct pt_stack_rec rec;

	if (!s->py_res || bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stacks), &idx, &rec) ||
	    pt_py_words_read(bpf_map__fd(s->skel->maps.py_chunks), bpf_map__fd(s->skel->maps.py_stacks),
			     idx, &rec, &ps))
		return;
	pt_py_resolve_stack(s->py_res, idx, ps.w, rec.py_nr);
}

/* Load the symbol tables of everything the target maps now, so that symbolizing the first
 * invocation's stacks does not stall event handling. consume: the target runs (a held image
 * let go first): its events are taken between objects, as the poll loop would. */
static void warm_symbolizer(struct pt_session *s, bool consume)
{
	struct pt_maps maps = { 0 };
	struct pt_symres res;
	int k;

	if (!s->sym || pt_maps_read(s->pid, &maps))
		return;
	for (k = 0; k < maps.n; k++) {
		if (!strchr(maps.m[k].perms, 'x') || !maps.m[k].path || maps.m[k].path[0] != '/')
			continue;
		if (pt_stop_requested())
			break;   /* the rest load lazily, for the report (util/stop.h) */
		pt_sym_resolve(s->sym, maps.m[k].start, &res);
		if (consume)
			ring_buffer__consume(s->rb);
	}
	pt_maps_free(&maps);
}

static void target_exec(struct pt_session *s, bool held, uint64_t exec_ns, uint32_t first_stack);

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
		 * command's own exec). Attached, now: before an exit in the same batch of events
		 * takes the new image's maps away. */
		if (!s->launched && len >= sizeof(*e))
			target_exec(s, false, e->ts, (uint32_t)e->addr);
		if (len >= sizeof(*e))
			s->exec_ev_ns = e->ts;
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
	case PT_EV_INV_START: {
		const struct pt_inv_event *ie = data;

		if (len < sizeof(*ie))
			return 0;
		pt_rapi_request_id(ie->data, ie->len < PT_RAPI_COPY ? ie->len : PT_RAPI_COPY,
				   s->start_id[ie->seq & 1], sizeof(s->start_id[0]));
		s->start_ts[ie->seq & 1] = ie->ts;
		arena_skip(s, ie->ts);   /* the next invocation began before the reading was due */
		break;
	}
	case PT_EV_INV_RECORD: {
		const struct pt_inv_record_event *re = data;

		if (len < sizeof(*re))
			return 0;
		memcpy(&s->ended, &re->inv, sizeof(s->ended));
		s->ended_ok = true;
		break;
	}
	case PT_EV_INV_END: {
		const struct pt_inv_event *ie = data;

		if (len < sizeof(*ie))
			return 0;
		invocation_ended(s, ie->seq, ie->ts);
		break;
	}
	}
	return 0;
}

/* ---- exec: the target became another program ---------------------------------------- */

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;

	return a && b && !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static void exec_use_allocator(struct pt_session *s, struct pt_allocator *na, struct pt_exec_note *x);

/* The new image's allocator: probes for it when it is another object (uprobes are per inode,
 * filtered by process: the same libc keeps its probes across the exec). */
static void exec_allocator(struct pt_session *s, char **paths, int npaths, struct pt_exec_note *x)
{
	struct pt_allocator na;

	if (s->opt->light)
		return;
	memset(&na, 0, sizeof(na));
	na.open_fd = -1;
	if (pt_find_allocator_in((const char *const *)paths, npaths, &na)) {
		x->allocator_missing = true;
		pt_allocator_free(&na);
		return;
	}
	exec_use_allocator(s, &na, x);
}

/* The new image's allocator na (taken): probed unless it is the object already probed. */
static void exec_use_allocator(struct pt_session *s, struct pt_allocator *na, struct pt_exec_note *x)
{
	if ((na->ino && na->ino == s->alloc.ino && na->dev == s->alloc.dev) ||
	    same_file(na->open_path, s->alloc.open_path)) {
		pt_allocator_free(na);
		return;
	}
	/* The report lists the probes of the allocator the target ends with. */
	s->rep.nprobes = 0;
	if (pt_plan_probes(na, s->rep.probes, &s->rep.nprobes) ||
	    pt_attach_allocator(s->skel, &s->links, na, s->pid, s->rep.probes, s->rep.nprobes,
				s->multi)) {
		x->allocator_missing = true;
		pt_allocator_free(na);
		return;
	}
	x->reprobed = true;
	pt_allocator_free(&s->alloc);
	s->alloc = *na;
	pt_collect_set_allocator(s->alloc.path);
}


/* The planned PyObject_* / PyMem_* probes attached (both families are in one file). */
static void pyobj_attach(struct pt_session *s)
{
	struct pt_pyobj_note *n = &s->rep.pyobj;

	if (!n->nprobes || n->probed)
		return;
	if (pt_attach_allocator(s->skel, &s->links, &s->pyalloc.fam[PT_PYALLOC_OBJ], s->pid, n->probes,
				n->nprobes, s->multi)) {
		fprintf(stderr, "peaktrace: --python-objects: Python objects are not traced\n");
		return;
	}
	n->probed = true;
}

/*
 * --python-objects: CPython's object allocator probed like malloc (python/pyalloc.h), unless the
 * interpreter runs with PYTHONMALLOC=malloc, where every object already is a malloc block and
 * the malloc probes see it. attach: the programs are loaded (an exec); else planned only.
 * start: the command's first image in launch mode, whose environment peaktrace chose.
 */
static void pyobj_setup(struct pt_session *s, bool attach, bool start)
{
	struct pt_pyobj_note *n = &s->rep.pyobj;
	char env[32] = "";
	int err;

	if (!s->opt->python_objects || s->opt->light)
		return;
	pt_pyalloc_free(&s->pyalloc);
	n->found = n->via_malloc = n->probed = false;
	n->nprobes = 0;
	n->inlined_sites = 0;
	err = s->launched ? pt_pyalloc_find(s->py.path, s->py.path, &s->pyalloc)
			  : pt_pyalloc_find_pid(s->pid, s->py.path, s->py.inode, &s->pyalloc);
	pt_sanitize(n->path, sizeof(n->path), s->py.path);
	if (err) {
		fprintf(stderr, "peaktrace: --python-objects: %s exports no PyObject_Malloc (%s): Python "
				"objects are not traced\n", n->path, strerror(-err));
		return;
	}
	n->found = true;
	if (start) {
		snprintf(env, sizeof(env), "%s", s->launch_pymalloc);
	} else {
		struct pt_environ e;

		if (pt_environ_read(s->pid, &e) == 0) {
			const char *v = pt_environ_get(&e, "PYTHONMALLOC");

			pt_sanitize(env, sizeof(env), v ? v : "");
			pt_environ_free(&e);
		}
	}
	snprintf(n->pythonmalloc, sizeof(n->pythonmalloc), "%s", env);
	n->inlined_sites = s->pyalloc.inlined_sites;
	if (strncmp(env, "malloc", 6) == 0) {
		n->via_malloc = true;
		return;
	}
	if (pt_plan_probes(&s->pyalloc.fam[PT_PYALLOC_OBJ], n->probes, &n->nprobes) ||
	    pt_plan_probes(&s->pyalloc.fam[PT_PYALLOC_MEM], n->probes, &n->nprobes)) {
		n->nprobes = 0;
		return;
	}
	if (n->inlined_sites)
		fprintf(stderr, "peaktrace: warning: --python-objects: %s inlines pymalloc into %u call "
				"sites no probe can see: objects allocated there are missing from the heap "
				"views (run it with PYTHONMALLOC=malloc: peaktrace sets it for a command it "
				"launches, unless PYTHONMALLOC is set)\n", n->path, n->inlined_sites);
	if (attach)
		pyobj_attach(s);
}

/* CPython in the new image: its offsets for the walk (which stops until it is located). */
static void exec_python(struct pt_session *s, char **paths, int npaths, struct pt_exec_note *x)
{
	struct pt_py_info py;

	memset(&py, 0, sizeof(py));
	__atomic_store_n(&s->skel->bss->py_off.runtime, 0, __ATOMIC_RELEASE);
	if (!s->opt->fp_stacks || (paths ? pt_py_detect((const char *const *)paths, npaths, &py)
					 : pt_py_detect_pid(s->pid, &py))) {
		pt_py_info_free(&py);
		return;
	}
	pt_py_resolver_free(s->py_res);
	s->py_res = NULL;
	pt_py_info_free(&s->py);
	s->py = py;
	s->py_found = true;
	x->python = true;
	python_locate(s);
	pyobj_setup(s, true, false);
}

/*
 * The target exec'd: the per-image steps again, for the image it is now — the symbolizer
 * (stacks recorded before first_stack keep the old image's mappings), the allocator's probes,
 * CPython, the unwind tables, comm and exe. held: stopped at the exec stop (launch mode), so
 * no allocation of the new image can be missed; else the time until its probes were in place
 * is noted.
 */
/* An exec into another root (target_exec): true once the new image's allocator is mapped and
 * probed (or is the one already probed), with CPython looked for in its maps too. */
static bool exec_settle(struct pt_session *s)
{
	struct pt_exec_note spare, *x = &spare;
	struct pt_allocator na;
	uint64_t dt;

	if (!s->exec_pending)
		return true;
	memset(&na, 0, sizeof(na));
	na.open_fd = -1;
	if (pt_find_allocator(s->pid, &na)) {
		pt_allocator_free(&na);
		return false;
	}
	memset(&spare, 0, sizeof(spare));
	if (s->exec_pending_note < PT_EXECS_MAX)
		x = &s->rep.execs.n[s->exec_pending_note];
	x->allocator_missing = false;
	exec_use_allocator(s, &na, x);
	exec_python(s, NULL, 0, x);
	s->exec_pending = false;
	s->need_refresh = true;
	if (x->held)   /* the libraries its loader mapped so far, before it goes on */
		pt_unwind_refresh_held(s->unw);
	dt = now_ns() - s->exec_pending_ns;
	if (x->held)
		x->held_ns = dt;
	else
		x->window_ns = dt;
	return true;
}

static bool exec_settle_step(void *arg)
{
	return exec_settle(arg);
}

/* The new image never mapped an allocator we know (stepped to the end, or given up on): said as
 * for any image without one. */
static void exec_unsettled(struct pt_session *s)
{
	if (!s->exec_pending)
		return;
	if (s->exec_pending_note < PT_EXECS_MAX)
		s->rep.execs.n[s->exec_pending_note].allocator_missing = true;
	s->exec_pending = false;
}

static void target_exec(struct pt_session *s, bool held, uint64_t exec_ns, uint32_t first_stack)
{
	struct pt_execs *ex = &s->rep.execs;
	struct pt_exec_note x;
	char exe[4096], link[64], *nexe = NULL, **paths = NULL;
	int npaths = 0;
	ssize_t n;

	memset(&x, 0, sizeof(x));
	snprintf(link, sizeof(link), "/proc/%d/exe", s->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n <= 0)
		n = snprintf(exe, sizeof(exe), "?");   /* gone already: its stacks stay unnamed */
	exe[n] = 0;
	x.held = held;
	x.at_ns = exec_ns > s->start_ns ? exec_ns - s->start_ns : 0;
	x.first_stack = first_stack;
	x.live_bytes = (uint64_t)s->skel->bss->g.live_bytes;
	x.live_count = (uint64_t)s->skel->bss->g.live_count;
	snprintf(x.from, sizeof(x.from), "%.*s", (int)sizeof(x.from) - 1, s->rep.exe);
	pt_sanitize(x.to, sizeof(x.to), exe);
	if (s->sym)
		pt_sym_exec(s->sym, first_stack);
	if (exe[0] == '/' && !pt_target_same_root(s->pid)) {
		/* Another root (a chroot, a container's): the host's loader would list the host's
		 * libraries, so the allocator and CPython are read from the new image's maps once
		 * its own loader has mapped them (exec_settle); held, the image is stepped to that
		 * point (target/launch.c), so nothing it allocates is missed either. */
		s->exec_pending = true;
		s->exec_pending_note = ex->count;
		s->exec_pending_ns = exec_ns;
		if (held) {
			s->child.step = true;
			s->child.at_step = exec_settle_step;
		}
	} else if (exe[0] == '/' && pt_load_order(exe, &nexe, &paths, &npaths) == 0) {
		exec_allocator(s, paths, npaths, &x);
		exec_python(s, paths, npaths, &x);
		if (s->paths)
			pt_strv_free(s->paths, s->npaths);
		free(s->exe);
		s->paths = paths;
		s->npaths = npaths;
		s->exe = nexe;
	} else {
		x.allocator_missing = true;
	}
	/* Held at the exec stop: with --fast-start only the tables the cache has; the poll loop
	 * builds the others once the target runs again (the exec event asked for that refresh),
	 * and until then their frames are counted as not yet covered. */
	if (held)
		pt_unwind_refresh_held(s->unw);
	else
		pt_unwind_refresh(s->unw);
	if (x.reprobed && !held && !s->exec_pending)
		x.window_ns = now_ns() - exec_ns;
	if (held)
		x.held_ns = now_ns() - exec_ns;
	pt_proc_comm(s->pid, s->rep.comm, sizeof(s->rep.comm));
	snprintf(s->rep.exe, sizeof(s->rep.exe), "%s", exe);
	sanitize_names(&s->rep);
	if (!held)   /* launch mode checks at the exec stop (at_child_exec) */
		s->node_flags_missing += pt_node_flags_warn(s->pid, s->rep.node_flags_note,
							    sizeof(s->rep.node_flags_note));
	if (ex->count < PT_EXECS_MAX)
		ex->n[ex->count] = x;
	ex->count++;
	if (s->opt->verbose)
		fprintf(stderr, "peaktrace: exec: %s -> %s\n", x.from, x.to);
}

/* Launch mode: stopped at an exec, before the new image runs; the first is the command's. */
static void at_child_exec(void *arg)
{
	struct pt_session *s = arg;
	uint64_t t;

	/* The hold began at the stop, not when we saw it: the exec event (sent by the kernel just
	 * before the stop, so it is in the ring buffer now) says when that was. */
	if (s->rb)
		ring_buffer__consume(s->rb);
	t = now_ns();
	if (s->exec_ev_ns && s->exec_ev_ns <= t && t - s->exec_ev_ns < 10000000000ULL)
		t = s->exec_ev_ns;
	s->exec_ev_ns = 0;
	if (s->child.execs > 1 && s->skel)
		target_exec(s, true, t, (uint32_t)s->skel->bss->g.next_stack + 1);
	s->node_flags_missing += pt_node_flags_warn(s->pid, s->rep.node_flags_note,
						    sizeof(s->rep.node_flags_note));
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
static void pyobj_cpu(struct pt_session *s, bool end);

static void at_child_exit(void *arg)
{
	struct pt_session *s = arg;
	uint64_t hwm = pt_proc_vmhwm(s->pid);

	if (s->sym)
		pt_sym_refresh(s->sym);
	if (hwm > s->vmhwm)
		s->vmhwm = hwm;
	if (!s->rep.pyobj.cpu_read)
		pyobj_cpu(s, true);
	arena_reading(s);
	collect_arenas(s);
	rss_kinds(s);
}

static void status_line(struct pt_session *s, uint64_t *last_allocs, uint64_t *last_ns)
{
	const struct pt_global *g = &s->skel->bss->g;
	uint64_t now = now_ns(), allocs = g->alloc_count;
	double rate = (double)(allocs - *last_allocs) * 1e9 / (double)(now - *last_ns + 1);
	char b1[32], b2[32], b3[32];

	fprintf(stderr, "\r\033[Klive %s (%" PRId64 " blocks)  peak %s  rss %s  %.0f allocs/s",
		pt_fmt_bytes(b1, sizeof(b1), (double)g->live_bytes), (int64_t)g->live_count,
		pt_fmt_bytes(b2, sizeof(b2), (double)g->peak_bytes),
		pt_fmt_bytes(b3, sizeof(b3),
			     (double)pt_rss_total(g)),
		rate);
	*last_allocs = allocs;
	*last_ns = now;
}

/* A streaming output file in the output directory; NULL after saying why. */
static FILE *open_out(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = pt_out_fopen(path);
	if (!f)
		fprintf(stderr, "peaktrace: cannot write %s: %s\n", path, strerror(errno));
	return f;
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
	s->wake_ep = s->pidfd = s->stats_fd = -1;
	s->rep.inv_stacks.stacks_fd = s->rep.inv_stacks.py_fd = s->rep.inv_stacks.py_chunks_fd = -1;
	verbose = opt->verbose;
	pt_collect_set_frames(opt->frames);
	libbpf_set_print(libbpf_print);
	return s;
}

/* -p PID: is it a process we can trace, and which allocator does it use. */
static int attach_target(struct pt_session *s)
{
	pid_t pid = s->opt->pid;
	int code, err;

	if ((code = check_pid(pid)) != EXIT_OK)
		return code;
	err = pt_find_allocator(pid, &s->alloc);
	if (err == -ESRCH) {
		fprintf(stderr, "peaktrace: no such process: %d\n", pid);
		return EXIT_NO_PROCESS;
	}
	if (err == -EINVAL) {
		fprintf(stderr, "peaktrace: PID %d has no user-space memory map (a kernel thread "
				"or a process that is exiting)\n", pid);
		return EXIT_UNSUPPORTED;
	}
	if (err == -EACCES || err == -EPERM) {
		fprintf(stderr, "peaktrace: cannot read the memory map of PID %d: %s\n", pid,
			strerror(-err));
		return EXIT_PERM;
	}
	if (err) {
		fprintf(stderr, "peaktrace: no malloc found in the objects PID %d has mapped (a "
				"static binary without symbols, or an allocator peaktrace does not "
				"know)\n", pid);
		return EXIT_UNSUPPORTED;
	}
	s->pid = pid;
	/* alloc.open_path is the mapped inode's (target/proc.h, pt_mapped_open): /proc/self/fd/N
	 * of the file opened inside the target's root while that is the file the process maps
	 * (alloc keeps the fd), else its map_files link; never the target's path again. */
	pt_proc_comm(pid, s->rep.comm, sizeof(s->rep.comm));
	pt_proc_exe(pid, s->rep.exe, sizeof(s->rep.exe));
	sanitize_names(&s->rep);
	return EXIT_OK;
}

/*
 * The launched command's extra environment (--target-env), and for --python-objects
 * PYTHONMALLOC=malloc unless the user set PYTHONMALLOC or the command is a CPython whose
 * allocator the probes see whole. A build that inlines pymalloc into its callers (Debian's)
 * cannot be probed whole; a script or shim that execs Python later cannot be looked at yet, so it
 * gets the setting too. With it every object is a malloc block: the heap views hold each at its
 * requested size, as tracemalloc counts them; the RSS is then glibc's, not pymalloc's arenas.
 */
static int launch_env(struct pt_session *s, char **env)
{
	static char setting[] = "PYTHONMALLOC=malloc";
	const char *user = getenv("PYTHONMALLOC");
	char exe[512];
	uint32_t inlined = 0;
	int n, k;
	bool found = false;

	for (n = 0; n < s->opt->ntarget_env; n++) {
		env[n] = s->opt->target_env[n];
		if (strncmp(env[n], "PYTHONMALLOC=", 13) == 0)
			user = env[n] + 13;
	}
	if (!s->opt->python_objects || s->opt->light)
		return n;
	if (user) {
		pt_sanitize(s->launch_pymalloc, sizeof(s->launch_pymalloc), user);
		return n;
	}
	for (k = 0; k < s->npaths && !found; k++) {
		struct pt_pyalloc pa;

		if (s->paths[k] && pt_pyalloc_find(s->paths[k], s->paths[k], &pa) == 0) {
			found = true;
			inlined = pa.inlined_sites;
			pt_pyalloc_free(&pa);
		}
	}
	if (found && !inlined)
		return n;
	env[n++] = setting;
	snprintf(s->launch_pymalloc, sizeof(s->launch_pymalloc), "malloc");
	s->rep.pyobj.set_pythonmalloc = true;
	pt_sanitize(exe, sizeof(exe), s->exe);
	if (found)
		fprintf(stderr, "peaktrace: --python-objects: %s inlines pymalloc into %u call sites no "
				"probe sees: running it with PYTHONMALLOC=malloc\n", exe, inlined);
	else
		fprintf(stderr, "peaktrace: --python-objects: %s is no CPython itself (a script or shim "
				"may exec one): running it with PYTHONMALLOC=malloc\n", exe);
	return n;
}

static int load_bpf(struct pt_session *s);

/* One byte to the coordinator on the ready fd (session.h). */
static void spare_say(struct pt_session *s, char c)
{
	if (write(s->opt->ready_fd, &c, 1) != 1)
		fprintf(stderr, "peaktrace: cannot tell the coordinator: %s\n", strerror(errno));
}

/* A spare (session.h): the BPF programs loaded with no target, then the order read. Returns
 * SPARE_UNUSED at end of file (the coordinator is done with us). */
static int spare_serve(struct pt_session *s)
{
	struct pt_spare_order o;
	size_t got = 0;
	int code;

	if ((code = load_bpf(s)) != EXIT_OK)
		return code;
	s->preloaded = true;
	spare_say(s, PT_SPARE_LOADED);
	while (got < sizeof(o)) {
		ssize_t n = read(s->opt->spare_fd, (char *)&o + got, sizeof(o) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return SPARE_UNUSED;
		got += (size_t)n;
	}
	close(s->opt->spare_fd);
	o.dir[sizeof(o.dir) - 1] = 0;
	s->spare_opt = *s->opt;
	s->spare_opt.pid = s->spare_opt.pids[0] = o.pid;
	s->spare_opt.npids = 1;
	s->spare_opt.sandbox_slot = o.slot;
	s->spare_opt.held = o.held != 0;
	memcpy(s->spare_dir, o.dir, sizeof(o.dir));
	s->spare_opt.outdir = s->spare_dir;
	s->opt = &s->spare_opt;
	return EXIT_OK;
}

/* -- CMD: which allocator the command will load, then start it, held before exec. */
static int launch_target(struct pt_session *s)
{
	char **cmd = s->opt->cmd, *env[PT_MAX_COMPARE + 1];
	const char *b;
	int err;

	err = pt_load_order(cmd[0], &s->exe, &s->paths, &s->npaths);
	if (err) {
		fprintf(stderr, "peaktrace: cannot execute %s: %s\n", cmd[0], strerror(-err));
		return err == -ENOENT ? EXIT_NO_PROCESS : EXIT_UNSUPPORTED;
	}
	err = pt_find_allocator_in((const char *const *)s->paths, s->npaths, &s->alloc);
	if (err) {
		fprintf(stderr, "peaktrace: no malloc found in %s or the libraries it loads (a "
				"static binary without symbols, or an allocator peaktrace does not "
				"know)\n", s->exe);
		return EXIT_UNSUPPORTED;
	}
	snprintf(s->rep.exe, sizeof(s->rep.exe), "%s", s->exe);
	b = strrchr(s->exe, '/');
	snprintf(s->rep.comm, sizeof(s->rep.comm), "%.15s", b ? b + 1 : s->exe);
	sanitize_names(&s->rep);
	err = pt_launch(cmd, env, launch_env(s, env), &s->child);
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
	err = s->launched ? pt_py_detect((const char *const *)s->paths, s->npaths, &s->py)
			  : pt_py_detect_pid(s->pid, &s->py);
	if (err == 0)
		s->py_found = s->opt->fp_stacks;
	else if (err == -ENOTSUP)
		pt_py_warn(&s->py);   /* counted: python_layout_failed */
	s->rep.pyobj.requested = s->opt->python_objects && !s->opt->light;
	if (err == 0)
		pyobj_setup(s, false, s->launched);

	/* Tracepoints are attached by their tracefs ids: a fresh system may not have it mounted. */
	if (access("/sys/kernel/tracing/events", F_OK) && access("/sys/kernel/debug/tracing/events", F_OK) &&
	    mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
		fprintf(stderr, "peaktrace: warning: cannot mount tracefs on /sys/kernel/tracing: %s\n",
			strerror(errno));
	return EXIT_OK;
}

/* The target's host PID (attach/nspid.h), as the BPF programs see it. */
static int host_pid(struct pt_session *s)
{
	int err = pt_host_tgid(s->pid, &s->host_pid);

	if (err) {
		fprintf(stderr, "peaktrace: cannot find which host PID PID %d is (peaktrace runs in a PID "
				"namespace of its own): %s\n", s->pid, strerror(-err));
		return err == -ESRCH ? EXIT_NO_PROCESS : EXIT_BPF;
	}
	return EXIT_OK;
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

/* Programs this run never attaches are not loaded: the verifier's time is most of the start-up
 * (--verifier-stats). --light attaches no allocator probe; boundary_hit serves uprobe boundaries
 * only; the Runtime API programs run only while they look for boundaries. */
static void skip_unused_programs(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	struct peaktrace_bpf *skel = s->skel;

	if (o->light) {
		bpf_program__set_autoload(skel->progs.alloc_enter_prog, false);
		bpf_program__set_autoload(skel->progs.alloc_return, false);
		bpf_program__set_autoload(skel->progs.free_enter, false);
	}
	if (o->boundary != BOUNDARY_UPROBE && o->boundary != BOUNDARY_AWS)
		bpf_program__set_autoload(skel->progs.boundary_hit, false);
	if (!skel->rodata->rapi_boundaries && !skel->rodata->rapi_first_start) {
		bpf_program__set_autoload(skel->progs.on_write_enter, false);
		bpf_program__set_autoload(skel->progs.on_read_exit, false);
		bpf_program__set_autoload(skel->progs.on_recvfrom_exit, false);
	}
	/* Asked by the unwind tables' loader only (unwind_maps.c), never attached. */
	if (!skel->rodata->dwarf_unwind)
		bpf_program__set_autoload(skel->progs.unw_key_probe, false);
}

/* Bytes of /proc/meminfo's MemTotal, 0 if unread. */
static uint64_t mem_total(void)
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

/* The live table's slots. --python-objects puts every object in it, so its default is sized
 * from the target (attached: what its anonymous memory could hold) and the machine
 * (pt_pyobj_live_slots); a --max-live given is taken as is. */
static uint32_t pyobj_live_slots(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	struct pt_pyobj_note *n = &s->rep.pyobj;
	uint64_t anon = 0;

	if (!o->python_objects || o->light || o->spare_fd >= 0)
		return o->live_slots;
	if (o->live_slots_set) {
		n->live_slots = o->live_slots;
		snprintf(n->live_sized_from, sizeof(n->live_sized_from), "--max-live");
		return o->live_slots;
	}
	if (!s->launched)
		anon = pt_proc_status_bytes(s->pid, "RssAnon");
	n->live_slots = pt_pyobj_live_slots(mem_total(), anon, n->live_sized_from,
					    sizeof(n->live_sized_from));
	return n->live_slots;
}

/* The target's user and system CPU time so far (/proc/PID/stat utime, stime: all its threads,
 * the dead ones too). False if unread. */
static bool proc_cpu_ns(pid_t pid, uint64_t *user, uint64_t *sys)
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

/* --python-objects: the target's CPU time at the start and (end) at its exit or the stop. */
static void pyobj_cpu(struct pt_session *s, bool end)
{
	struct pt_pyobj_note *n = &s->rep.pyobj;
	uint64_t u, k;

	if (!n->live_slots || !proc_cpu_ns(s->pid, &u, &k))
		return;
	if (!end) {
		n->cpu_user_ns = u;
		n->cpu_sys_ns = k;
		return;
	}
	n->cpu_user_ns = u > n->cpu_user_ns ? u - n->cpu_user_ns : 0;
	n->cpu_sys_ns = k > n->cpu_sys_ns ? k - n->cpu_sys_ns : 0;
	n->cpu_read = true;
}

/* Kernel memory of a map (its fdinfo's memlock), 0 if unread. */
static uint64_t map_memlock(int fd)
{
	unsigned long long v = 0;
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* --python-objects: what the live table takes, said before tracing starts; the kernel's BPF
 * run-time statistics on, so the report can state what the probes cost (they add two clock
 * reads to each program run: ~40 ns). */
static void pyobj_table_start(struct pt_session *s)
{
	struct pt_pyobj_note *n = &s->rep.pyobj;
	char b[32];

	if (!n->live_slots)
		return;
	n->live_table_bytes = map_memlock(bpf_map__fd(s->skel->maps.live)) +
			      map_memlock(bpf_map__fd(s->skel->maps.live_overflow));
	fprintf(stderr, "peaktrace: --python-objects: live table of %" PRIu32 " slots, %s of kernel memory "
			"(%s); every object takes a slot: --max-live N to change it\n", n->live_slots,
		pt_fmt_bytes(b, sizeof(b), (double)n->live_table_bytes), n->live_sized_from);
	s->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	n->stats = s->stats_fd >= 0;
	pyobj_cpu(s, false);
}

/* The allocator programs' runs and time (BPF run-time statistics, since pyobj_table_start). */
static void pyobj_cost(struct pt_session *s)
{
	const struct bpf_program *progs[3] = { s->skel->progs.alloc_enter_prog, s->skel->progs.alloc_return,
					       s->skel->progs.free_enter };
	struct pt_pyobj_note *n = &s->rep.pyobj;

	if (!n->stats)
		return;
	n->bpf_runs = n->bpf_ns = 0;
	for (int i = 0; i < 3; i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(progs[i]);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		/* A call is an entry (allocation or free); an allocation's return is its second run. */
		if (progs[i] != s->skel->progs.alloc_return)
			n->bpf_runs += info.run_cnt;
		n->bpf_ns += info.run_time_ns;
	}
}

/* Between open and load: rodata, map sizes, and the program types the probe plan needs. A
 * spare has no target yet: its target-dependent settings are the glibc ones (session.h). */
static int configure(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	struct peaktrace_bpf *skel = s->skel;
	uint32_t buckets = 1, slots = pyobj_live_slots(s);
	int code;

	while (buckets * PT_BUCKET_SLOTS < slots)
		buckets <<= 1;
	if (!s->preloaded && o->spare_fd >= 0)
		s->alloc.kind = PT_ALLOC_GLIBC;
	else if ((code = host_pid(s)) != EXIT_OK)
		return code;
	skel->bss->targ_tgid = (uint32_t)s->host_pid;
	skel->rodata->live_bucket_mask = buckets - 1;
	skel->rodata->max_stacks = o->max_stacks;
	skel->rodata->capture_stacks = o->fp_stacks;
	skel->rodata->sample_bytes = o->sample_bytes;
	pt_unwind_configure(skel, o->dwarf && o->fp_stacks, 0);
	skel->rodata->glibc_arenas = wants_arenas(s);
	skel->rodata->free_checks_thread = wants_free_checks(s);
	skel->rodata->rapi_boundaries = o->boundary == BOUNDARY_AUTO || o->boundary == BOUNDARY_RUNTIME_API;
	skel->rodata->rapi_first_start = o->boundary == BOUNDARY_AWS;
	bpf_map__set_max_entries(skel->maps.live, buckets);
	bpf_map__set_max_entries(skel->maps.stack_ids, o->max_stacks);
	bpf_map__set_max_entries(skel->maps.stacks, o->max_stacks);
	bpf_map__set_max_entries(skel->maps.stats, o->max_stacks);
	/* On whenever stacks are: an exec may start CPython (the walk waits for py_off.runtime;
	 * py_stacks is not preallocated). */
	skel->rodata->python = o->fp_stacks;
	/* bpf_rdonly_cast only where the kernel has it (6.2+): else the programs use the task's
	 * trusted pointer (unwind.bpf.h unw_task), which loads on any kernel, only verified
	 * slower. The kernel check (main.c, before any load) looked it up in the kernel's BTF
	 * already, so this costs nothing more; and PEAKTRACE_PRETEND_MISSING=bpf_rdonly_cast takes
	 * the fallback on any kernel (kernel/features.h). */
	skel->rodata->has_rdonly_cast = pt_kfeat_rdonly_cast();
	skel->rodata->probe_floor = o->probe_floor;
	if (o->probe_floor)
		fprintf(stderr, "peaktrace: --probe-floor: every probe attached with an empty program; "
				"the report's figures are all zero (a benchmark's floor, not a measurement)\n");
	bpf_map__set_max_entries(skel->maps.py_stacks, o->max_stacks);
	/* The pool of Python words: a chunk (128 bytes) per stack the table holds, 8 MiB at the
	 * default; stacks average two on a CPython import, so the hash map takes the words of the
	 * later half of a full table. */
	bpf_map__set_max_entries(skel->maps.py_chunks, o->py_chunks ? o->py_chunks : o->max_stacks);
	bpf_map__set_max_entries(skel->maps.live_overflow, buckets * PT_BUCKET_SLOTS / 16 + 1024);

	skip_unused_programs(s);
	if (o->spare_fd < 0 && (code = plan_probes(s)) != EXIT_OK)
		return code;
	s->tl.light = o->light;
	/* Uprobe-multi links (6.6+) when the kernel has them; perf-event uprobes otherwise. */
	s->multi = !o->perf_uprobes && pt_kfeat_has(PT_KF_UPROBE_MULTI);
	if (s->multi) {
		bpf_program__set_expected_attach_type(skel->progs.alloc_enter_prog, PT_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.alloc_return, PT_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(skel->progs.free_enter, PT_BPF_TRACE_UPROBE_MULTI);
	}
	return EXIT_OK;
}

/* --verifier-stats FILE (hidden): the kernel's verifier statistics of each program (log level 4:
 * instructions processed, states, verification time), so what each program costs the start-up
 * can be seen with the loader's real configuration, which `bpftool prog loadall` lacks. */
#define PT_VLOG_SIZE 16384

/* One log buffer per program, in skeleton order (bpfload.h arms them). */
static char *verifier_stats_bufs(struct pt_session *s)
{
	int n = pt_skel_nprogs(s->skel);

	return calloc(n ? n : 1, PT_VLOG_SIZE);
}

static unsigned long long vlog_field(const char *log, const char *key)
{
	const char *p = strstr(log, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* The verifier's "stack depth A+B+..." (each subprogram's frame, in bytes): digits and '+'. */
static void vlog_stack(const char *log, char *out, size_t size)
{
	const char *p = strstr(log, "stack depth ");
	size_t n = 0;

	if (p)
		for (p += strlen("stack depth "); n + 1 < size && ((*p >= '0' && *p <= '9') || *p == '+'); p++)
			out[n++] = *p;
	out[n] = 0;
}

/* One line per loaded program: NAME usec=T insns=N states=S peak_states=P stack=A+B...
 * chain_bytes=C (its deepest call chain's stack, tools/check-stack.py), then
 * the sums and the load's wall-clock and CPU time. The load runs on two threads (bpfload.c):
 * the process's CPU time, which is the load's alone while the session has no other thread. */
static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* load_ns: the load's wall-clock time; cpu_ns: the CPU time it took (the kernel's work in the
 * bpf() calls included), which a machine loaded by other work does not inflate. */
static void verifier_stats_write(struct pt_session *s, char *bufs, uint64_t load_ns, uint64_t cpu_ns)
{
	unsigned long long us = 0, insns = 0;
	FILE *f = pt_user_fopen(s->opt->verifier_stats);

	if (!f) {
		fprintf(stderr, "peaktrace: cannot write %s: %s\n", s->opt->verifier_stats, strerror(errno));
		return;
	}
	for (int i = 0; i < pt_skel_nprogs(s->skel); i++) {
		const struct bpf_program *prog = *pt_skel_prog(s->skel, i);
		const char *log = bufs + (size_t)i * PT_VLOG_SIZE;
		unsigned long long t = vlog_field(log, "verification time "),
				   n = vlog_field(log, "processed ");

		char stack[64];

		if (bpf_program__fd(prog) < 0)   /* not loaded */
			continue;
		vlog_stack(log, stack, sizeof(stack));
		fprintf(f, "%s usec=%llu insns=%llu states=%llu peak_states=%llu stack=%s chain_bytes=%d part=%d\n",
			bpf_program__name(prog), t, n, vlog_field(log, "total_states "),
			vlog_field(log, "peak_states "), stack, pt_stack_chain_bytes(bpf_program__name(prog)),
			s->parts.loaded_by[i]);
		us += t;
		insns += n;
	}
	fprintf(f, "total usec=%llu insns=%llu load_ms=%.1f load_cpu_ms=%.1f maps_ms=%.1f progs_ms=%.1f\n",
		us, insns, load_ns / 1e6, cpu_ns / 1e6, s->parts.maps_ns / 1e6, s->parts.progs_ns / 1e6);
	fclose(f);
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
	if (s->opt->verifier_stats && !(vbufs = verifier_stats_bufs(s)))
		fprintf(stderr, "peaktrace: --verifier-stats: out of memory\n");
	t_load = now_ns();
	cpu_load = process_cpu_ns();
	/* A spare loads beside the others (--follow starts three at once) or beside the processes
	 * it follows, at nice +10: one copy, the least CPU. A session something waits for: two,
	 * when a second core is free to take one. */
	err = pt_bpf_load(s->skel, &s->parts,
			  s->opt->load_parts ? s->opt->load_parts :
			  s->opt->spare_fd >= 0 ? 1 : pt_load_parts_here(), vbufs, PT_VLOG_SIZE);
	if (vbufs && !err)
		verifier_stats_write(s, vbufs, now_ns() - t_load, process_cpu_ns() - cpu_load);
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
		spare_say(s, PT_SPARE_UNFIT);   /* the coordinator starts a session of its own */
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

	if ((code = s->preloaded ? spare_target(s) : load_bpf(s)) != EXIT_OK)
		return code;
	s->arenas = s->skel->rodata->glibc_arenas;
	/* .eh_frame tables: the target's code now (attach), or what it will load (launch). */
	t = now_ns();
	if (s->skel->rodata->dwarf_unwind) {
		const char *why;
		int e = pt_uwcache_init(&s->uwc, s->opt->cache_dir, s->opt->no_cache, &why);

		if (e)
			fprintf(stderr, "peaktrace: warning: unwind table cache %s not used (%s: %s): "
					"tables are built at every start\n",
				s->opt->cache_dir ? s->opt->cache_dir : PT_UWCACHE_DEFAULT_DIR, why,
				strerror(-e));
	}
	s->unw = pt_unwind_load(s->skel, s->pid, s->launched ? s->paths : NULL, s->npaths, &s->uwc,
				s->opt->fast_start);
	s->rep.startup.unwind_ns = now_ns() - t;
	s->unw_ms0 = pt_unwind_build_ms(s->unw);
	return EXIT_OK;
}

/* Every write into the skeleton's .bss before attaching: the init phase's record and, when
 * attaching, the RSS the process already has. */
static void seed_globals(struct pt_session *s)
{
	struct pt_global *g = &s->skel->bss->g;

	/* The init phase (seq 0) runs from now until the runtime first asks for work. */
	g->inv[0].state = PT_INV_RUNNING;
	g->inv[0].start_ns = now_ns();
	g->inv[0].start_epoch = g->epoch = 1;   /* epoch 0 would read as "untimed" */
	g->inv[0].peak_seq = 1;
	g->inv_peak_counter = 1;
	s->skel->bss->rss_g.inv_peak_seq[0] = s->skel->bss->rss_g.inv_counter = 1;   /* rss.bpf.h */
	/* Launch mode: until its exec the target is our own copy (unwind.bpf.h: no walks). */
	s->skel->bss->unw_pre_exec = s->launched;
	if (!s->launched) {
		/* RSS so far: kmem:rss_stat only reports a counter when it changes. */
		g->rss[PT_RSS_ANON] = (int64_t)pt_proc_status_bytes(s->pid, "RssAnon");
		g->rss[PT_RSS_FILE] = (int64_t)pt_proc_status_bytes(s->pid, "RssFile");
		g->rss[PT_RSS_SHMEM] = (int64_t)pt_proc_status_bytes(s->pid, "RssShmem");
		g->rss_peak = pt_rss_total(g);
		g->inv[0].rss_start = g->inv[0].rss_peak = g->rss_peak;
		/* RSS attribution (bpf/rss.bpf.h): what is resident now was faulted in unseen. */
		s->skel->bss->rss_g.now.before = g->rss[PT_RSS_ANON];
		s->skel->bss->rss_g.at_peak = s->skel->bss->rss_g.now;
		s->skel->bss->rss_g.at_peak.anon = g->rss[PT_RSS_ANON];
		s->skel->bss->rss_g.sh_now[0].before = g->rss[PT_RSS_FILE];
		s->skel->bss->rss_g.sh_now[1].before = g->rss[PT_RSS_SHMEM];
		s->skel->bss->rss_g.sh_at_peak[0] = s->skel->bss->rss_g.sh_now[0];
		s->skel->bss->rss_g.sh_at_peak[0].total = g->rss[PT_RSS_FILE];
		s->skel->bss->rss_g.sh_at_peak[1] = s->skel->bss->rss_g.sh_now[1];
		s->skel->bss->rss_g.sh_at_peak[1].total = g->rss[PT_RSS_SHMEM];
		s->skel->bss->rss_g.sh_snap_seq[0] = s->skel->bss->rss_g.sh_snap_seq[1] =
			s->skel->bss->rss_g.peak_seq;
	}
}

/* DIR/invocations.jsonl, and the --emf stream (DIR/emf.jsonl or stdout). */
static int open_streams(struct pt_session *s)
{
	const struct pt_options *o = s->opt;

	s->invs.keep = o->max_inv_kept;
	s->invs.max_peak = o->max_peak;
	s->rep.out.cap = o->outdir ? o->max_output : 0;
	if (o->outdir) {
		if (!(s->jsonl = open_out(o->outdir, "invocations.jsonl")) ||
		    (o->emf && !(s->emf = open_out(o->outdir, "emf.jsonl"))))
			return EXIT_OUTPUT;
	} else if (o->emf) {
		s->emf = stdout;
	}
	if (o->emf)
		pt_emf_function_name(s->pid, s->launched, s->rep.comm, s->function_name,
				     sizeof(s->function_name));
	return EXIT_OK;
}

/* aws-lambda-cpp's boundaries, now or (not mapped yet: -ENOENT) when new code is mapped.
 * Returns 0 or -errno of a real failure. */
static int attach_aws(struct pt_session *s, const char *const *paths, bool retry)
{
	int err = pt_attach_aws_boundaries(s->skel, &s->links, s->pid, retry ? NULL : paths,
					   retry ? 0 : s->npaths, retry ? false : s->launched, retry);

	s->aws_pending = err == -ENOENT;
	/* Launch mode: the runtime may have entered get_next before these probes were set (no
	 * return probe for that call): its socket, found now, gives the first start (BPF:
	 * rapi_first_start; a no-op once get_next's entry probe has ended the init phase). */
	if (retry && !err)
		pt_rapi_seed(bpf_map__fd(s->skel->maps.rapi_fds), s->pid, s->host_pid);
	if (retry && !err)
		fprintf(stderr, "peaktrace: --boundary uprobe: aws-lambda-cpp is mapped now; its "
				"invocation boundaries are set\n");
	return err == -ENOENT ? 0 : err;
}

struct tp_attach {
	struct peaktrace_bpf *skel;
	struct pt_links links;
	bool boundaries;
	int err;
};

static void *attach_tracepoints(void *arg)
{
	struct tp_attach *a = arg;

	a->err = pt_attach_tracepoints(a->skel, &a->links, a->boundaries);
	return NULL;
}

/* The allocator's probes, and how many links they took: the report says what attaching them
 * one by one cost on a kernel without uprobe-multi links. */
static int attach_allocator(struct pt_session *s)
{
	int n = s->links.n, err = pt_attach_allocator(s->skel, &s->links, &s->alloc, s->pid,
						      s->rep.probes, s->rep.nprobes, s->multi);

	s->rep.kernel_cost.uprobe_links = (uint32_t)(s->links.n - n);
	return err;
}

/* The allocator's probes, then the tracepoints. Launched, both at once on two threads (the
 * uprobe-multi link alone is ~9 ms of kernel work, the tracepoints ~0.5 ms each): the command
 * is held before its exec, nothing of it runs, so their order makes no difference there.
 * Attached, in that order, as always. */
static int attach_probes(struct pt_session *s)
{
	struct tp_attach a = { .skel = s->skel, .boundaries = s->skel->rodata->rapi_boundaries ||
								  s->skel->rodata->rapi_first_start };
	pthread_t t;
	int err;

	if (!s->launched || pthread_create(&t, NULL, attach_tracepoints, &a))
		return attach_allocator(s) || pt_attach_tracepoints(s->skel, &s->links, a.boundaries);
	err = attach_allocator(s);
	pthread_join(t, NULL);
	/* Kept (and detached at the end) whether or not either failed. */
	if (pt_links_take(&s->links, &a.links) && !err)
		err = -ENOMEM;
	return err || a.err;
}

int pt_session_attach(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	struct peaktrace_bpf *skel = s->skel;
	const char *const *paths = (const char *const *)s->paths;
	uint64_t t = now_ns();
	int code;

	seed_globals(s);
	if ((code = open_streams(s)) != EXIT_OK)
		return code;
	pyobj_table_start(s);
	if (!s->launched)
		pt_timeline_start(&s->tl, &s->skel->bss->g, s->pid, o->timeline_ms);
	if ((skel->rodata->rapi_boundaries || skel->rodata->rapi_first_start) && !s->launched)
		pt_rapi_seed(bpf_map__fd(skel->maps.rapi_fds), s->pid, s->host_pid);
	if (attach_probes(s) ||
	    (o->boundary == BOUNDARY_UPROBE &&
	     pt_attach_boundaries(skel, &s->links, &o->boundary_spec, s->pid, paths, s->npaths,
				  s->launched, o->verbose)) ||
	    (o->boundary == BOUNDARY_AWS && attach_aws(s, paths, false)))
		return EXIT_BPF;
	pyobj_attach(s);
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
		pt_timeline_start(&s->tl, &s->skel->bss->g, s->pid, s->opt->timeline_ms);
	} else if (kill(s->pid, 0) && errno == ESRCH) {
		fprintf(stderr, "peaktrace: no such process: %d (it exited while probes were attached)\n",
			s->pid);
		return EXIT_NO_PROCESS;
	}
	pt_sym_perfmap_max(s->opt->perf_map_max);
	s->sym = pt_sym_new(s->pid);
	pt_collect_set_allocator(s->alloc.path);
	s->ar.attach_resident = -1;
	if (!s->launched && s->arenas)
		s->ar.attach_resident = pt_arenas_resident_in_memory(s->pid);
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
	if (s->opt->ready_fd >= 0) {
		/* A coordinator holds the process until now (--follow). */
		if (write(s->opt->ready_fd, "1", 1) < 0)
			fprintf(stderr, "peaktrace: cannot tell the coordinator: %s\n", strerror(errno));
		close(s->opt->ready_fd);
	}
	/* A held image (--follow) is let go first: its symbols (its program, ld.so, libc: what
	 * is mapped at the hold, 70-130 ms to read here for python3) are read while it runs, as
	 * those of everything it maps later are; its events meanwhile wait in the ring buffer,
	 * larger for a spare's sessions (SPARE_RINGBUF). */
	if (!s->launched && s->opt->held)
		warm_symbolizer(s, true);
	return EXIT_OK;
}

/*
 * The loop's epoll set. Not libbpf's own epoll fd with ours added to it: libbpf reads each
 * event's data as the index of one of its rings. Without it (no epoll, no signalfd) the loop
 * wakes on the ring buffer and its timeout alone, as it did before.
 */
static void wake_setup(struct pt_session *s)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fd = s->launched ? pt_sigchld_fd() : (int)syscall(SYS_pidfd_open, s->pid, 0);

	if (!s->launched)
		s->pidfd = fd;
	s->wake_ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->wake_ep < 0)
		return;
	ev.data.u32 = 0;
	if (epoll_ctl(s->wake_ep, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->rb), &ev))
		goto fail;
	ev.data.u32 = 1;
	if (fd >= 0 && epoll_ctl(s->wake_ep, EPOLL_CTL_ADD, fd, &ev))
		goto fail;
	return;
fail:
	close(s->wake_ep);
	s->wake_ep = -1;
}

/* Sleep until an event, a state change of the target, or timeout_ms; then the events. Returns
 * ring_buffer__consume's count or -errno. */
static int wait_events(struct pt_session *s, int timeout_ms)
{
	struct epoll_event ev[2];
	int n, i;

	if (s->wake_ep < 0) {
		/* Records nobody was woken for make no epoll event: consume after the poll. */
		n = ring_buffer__poll(s->rb, timeout_ms);
		i = n < 0 ? n : ring_buffer__consume(s->rb);
		return n < 0 ? n : i < 0 ? i : n + i;
	}
	n = epoll_wait(s->wake_ep, ev, 2, timeout_ms);
	if (n < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		if (ev[i].data.u32 != 1)
			continue;
		if (s->launched) {
			pt_sigchld_drain();   /* the child's changes are reaped below, WNOHANG */
		} else {
			/* Readable for good once the process has exited, reaped or not (its parent
			 * may never reap it): out of the set, or the loop would spin. */
			epoll_ctl(s->wake_ep, EPOLL_CTL_DEL, s->pidfd, NULL);
			s->pidfd_exited = true;
		}
	}
	return ring_buffer__consume(s->rb);
}

/* The loop's sleep: 10 ms while RSS kinds wait to be read, 20 while an arena reading is due,
 * else 100; never past the end of -d. */
static int poll_timeout(const struct pt_session *s, uint64_t now)
{
	int ms = pt_rss_pending(&s->rep.rss) ? 10 : s->arena_due ? 20 : 100;

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
	wake_setup(s);
	while (!pt_stop_signal()) {
		uint64_t now;

		/* After new Python stacks (or RSS stacks), a short wait: the kernel wakes this loop
		 * for them at most once a millisecond (bpf/state.bpf.h ev_burst_wake_flags), so the
		 * last ones of a burst are taken after this timeout while their code objects (their
		 * pages) are still there. Records nobody was woken for make no epoll event:
		 * wait_events takes them (a consume, not a poll). */
		bool burst = s->burst_events;

		s->burst_events = false;
		err = wait_events(s, burst ? 1 : poll_timeout(s, now_ns()));
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
			exec_unsettled(s);
			s->child.gave_up = false;
		}
		/* Attached, an exec into another root: probed as soon as its loader mapped it, the
		 * time before said (window_ns); given up after 5 s. */
		if (s->exec_pending && !s->launched && !exec_settle(s) &&
		    now - s->exec_pending_ns > 5000000000ULL)
			exec_unsettled(s);
		if (s->need_refresh && s->sym && !s->exited) {
			/* Boundaries first: the rest (symbols, unwind tables of new code) can take
			 * long enough for the runtime to reach its first get_next meanwhile. */
			if (s->aws_pending)
				attach_aws(s, NULL, true);
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
		if (!s->launched && (s->pidfd_exited || (kill(s->pid, 0) && errno == ESRCH))) {
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
			status_line(s, &last_allocs, &last_status);
		if (o->duration > 0 && now - s->start_ns >= (uint64_t)(o->duration * 1e9))
			break;
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	if (s->aws_pending)
		fprintf(stderr, "peaktrace: --boundary uprobe: aws-lambda-cpp was never mapped: no invocation "
				"boundaries were seen\n");
}

/* The invocation (or init phase) still running when tracing stopped. */
static void close_running_invocation(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	struct pt_inv cur = s->skel->bss->g.inv[s->skel->bss->g.inv_seq & 1];
	const struct pt_global *gg = &s->skel->bss->g;
	struct pt_inv_record rec;
	uint32_t n = stacks_span(s);

	if (cur.state == PT_INV_RUNNING) {
		/* Closed by the rule the BPF side uses at a boundary (bpf/inv.h). */
		pt_inv_close(&cur, gg, now_ns(), PT_OUT_UNFINISHED);
		/* Blocks allocated from here on are after it, as the BPF side's end would say. */
		cur.end_epoch = __atomic_add_fetch(&s->skel->bss->g.epoch, 1, __ATOMIC_SEQ_CST);
		pt_inv_capture(&rec, &cur, bpf_map__fd(s->skel->maps.stats), n, o->per_invocation,
			       o->sample_bytes ? PT_SAMPLE_COUNT_SHIFT : 0);
		/* And its RSS stacks, as invocation_ended reads them at a boundary. */
		pt_inv_capture_rss(&rec, s->skel->bss->rss_g.inv_peak_seq[cur.seq & 1],
				   bpf_map__fd(s->skel->maps.stats), n, o->per_invocation);
		if (!rec.id[0] && rec.seq)
			snprintf(rec.id, sizeof(rec.id), "%s", s->start_id[rec.seq & 1]);
		rec.attached = !s->launched && !s->opt->held;
		rec.light = s->opt->light;
		rec.vmhwm = s->vmhwm > s->hiwater ? s->vmhwm : s->hiwater;
		pt_inv_append(&s->invs, &rec);
	}
}

/* --prog-stats FILE (hidden, for tools/bench/bench.py): each program's kernel run count and run
 * time so far, read before the probes go. The kernel counts them only while the sysctl
 * kernel.bpf_stats_enabled is 1; the benchmark turns it on for its own pass. */
static void write_prog_stats(struct pt_session *s)
{
	FILE *f = pt_user_fopen(s->opt->prog_stats);

	if (!f) {
		fprintf(stderr, "peaktrace: cannot write %s: %s\n", s->opt->prog_stats, strerror(errno));
		return;
	}
	for (int i = 0; i < pt_skel_nprogs(s->skel); i++) {
		const struct bpf_program *prog = *pt_skel_prog(s->skel, i);
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		fprintf(f, "%s %llu %llu\n", bpf_program__name(prog), (unsigned long long)info.run_cnt,
			(unsigned long long)info.run_time_ns);
	}
	fclose(f);
}

void pt_session_stop(struct pt_session *s)
{
	exec_unsettled(s);
	int err;

	if (s->opt->prog_stats)
		write_prog_stats(s);
	pyobj_cost(s);
	if (!s->exited && !s->rep.pyobj.cpu_read)
		pyobj_cpu(s, true);
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
	arena_reading(s);
	close_running_invocation(s);
	flush_invocations(s);
	/* timeline.jsonl is complete and closed before any report is written (report.html reads
	 * it). */
	pt_timeline_stop(&s->tl);
	if (s->opt->outdir && (err = s->tl_err = pt_timeline_write_dir(s->opt->outdir, &s->tl, &s->invs)))
		fprintf(stderr, "peaktrace: cannot write %s/timeline.jsonl or .svg: %s\n", s->opt->outdir,
			strerror(-err));
}

/* The stack table's use: whole stacks, and those kept cut per tier (pt_tier_start); and what
 * the tables cost in kernel memory. */
static void stacks_used(struct pt_session *s)
{
	struct pt_report *rep = &s->rep;
	struct peaktrace_bpf *k = s->skel;
	uint32_t max = s->opt->max_stacks, inner = pt_tier_start(max, PT_TIER_INNER);
	uint32_t leaf = pt_tier_start(max, PT_TIER_LEAF);
	uint64_t in = k->bss->tier_next[PT_TIER_INNER], lf = k->bss->tier_next[PT_TIER_LEAF];

	rep->stacks_cut[PT_TIER_INNER] = in < leaf - inner ? in : leaf - inner;
	rep->stacks_cut[PT_TIER_LEAF] = lf < max - leaf ? lf : max - leaf;
	rep->stacks_used = (rep->totals.next_stack < inner - 1 ? rep->totals.next_stack : inner - 1) +
			   rep->stacks_cut[PT_TIER_INNER] + rep->stacks_cut[PT_TIER_LEAF];
	rep->max_stacks = max;
	rep->stack_table_bytes = pt_map_memlock(bpf_map__fd(k->maps.stack_ids)) +
				 pt_map_memlock(bpf_map__fd(k->maps.stacks)) +
				 pt_map_memlock(bpf_map__fd(k->maps.stats)) +
				 pt_map_memlock(bpf_map__fd(k->maps.py_chunks));
	rep->bpf_maps_bytes = pt_maps_memlock(k->obj);
	rep->tracer_mapped = pt_map_mapped_bytes();
}

/* The report's figures that need no symbolizing: the target, the kernel's totals and counters. */
static void report_figures(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	struct pt_report *rep = &s->rep;

	rep->pid = s->pid;
	rep->launched = s->launched;
	rep->totals = s->skel->bss->g;
	rep->rss.kernel = s->skel->bss->rss_g;
	rep->top = o->top;
	rep->json_stacks = o->json_stacks;
	rep->attach_multi = s->multi;
	rep->kernel = pt_kfeats();
	rep->kernel_cost.attach_ns = rep->startup.attach_ns;
	rep->light = o->light;
	rep->compare_run = o->compare_child;
	rep->unwind = !o->fp_stacks ? "none" : o->dwarf ? "dwarf" : "fp";
	rep->invs = &s->invs;
	rep->boundary = o->boundary == BOUNDARY_AUTO ? "runtime-api (auto)" : pt_boundary_names[o->boundary];
	/* Said where the invocations are printed too, not only on stderr. */
	if (s->aws_pending)
		rep->boundary = "uprobe (aws-lambda-cpp never mapped: no boundaries)";
	rep->inv_stacks = inv_src(s);
	rep->max_peak = o->max_peak;
	rep->sample_bytes = o->sample_bytes;
	rep->startup.unwind_later_ns = (uint64_t)((pt_unwind_build_ms(s->unw) - s->unw_ms0) * 1e6);
	rep->startup.cache_on = s->uwc.on;
	rep->startup.cache = s->uwc.st;
	collect_arenas(s);
	rep->arenas = s->ar;
	memset(&s->ar, 0, sizeof(s->ar));
	rep->arenas.allocator = pt_allocator_kind_name(s->alloc.kind);
	pt_read_errors(s->skel, rep->errors);
	rep->errors[PT_ERR_RAPI_FULL] += rep->totals.rapi_full;
	/* Over every record, kept in memory or not. */
	rep->errors[PT_ERR_INV_LOST] += s->invs.overwritten;
	rep->errors[PT_ERR_INV_STACKS_LOST] += s->invs.stacks_lost;
	rep->inv_seen = rep->totals.inv_seq;
	memcpy(rep->rb_lost, s->skel->bss->rb_lost, sizeof(rep->rb_lost));
	rep->rb_inv_shed = s->skel->bss->rb_inv_shed;
	rep->errors[PT_ERR_RINGBUF_LOST] += rep->rb_inv_shed;   /* counted apart in BPF */
	rep->errors[PT_ERR_RAPI_UNPARSED] += rep->totals.rapi_unparsed;
	rep->exited = s->exited || (s->launched && s->child.exited);
	if (s->launched && s->child.exited) {
		if (WIFSIGNALED(s->child.status))
			rep->exit_signal = WTERMSIG(s->child.status);
		else
			rep->exit_status = WEXITSTATUS(s->child.status);
	} else if (s->exited) {
		if (s->exit_code & 0x7f)
			rep->exit_signal = s->exit_code & 0x7f;
		else
			rep->exit_status = (s->exit_code >> 8) & 0xff;
	}
	rep->vmhwm_bytes = s->vmhwm > s->hiwater ? s->vmhwm : s->hiwater;
	stacks_used(s);
	pt_tl_summarize(&s->tl, &s->invs, &rep->timeline);
}

/* Each stack's Python words: only stacks that have some are in the map. */
static void read_py_words(struct pt_session *s)
{

	s->py_words = calloc(s->nstk ? s->nstk : 1, sizeof(*s->py_words));
	for (uint32_t k = 0; s->py_words && k < s->nstk; k++) {
		struct pt_stack_rec rec;

		if (!pt_stack_table_py_nr(&s->stacks_map, k) || !(s->py_words[k] = malloc(sizeof(*s->py_words[k]))))
			continue;
		pt_stack_table_get(&s->stacks_map, k, &rec);
		if (pt_py_words_read(bpf_map__fd(s->skel->maps.py_chunks),
				     bpf_map__fd(s->skel->maps.py_stacks), k, &rec, s->py_words[k])) {
			free(s->py_words[k]);
			s->py_words[k] = NULL;
		}
	}
	s->cin.py = (const struct pt_py_stack *const *)s->py_words;
}

/* Leaks across invocations (invocation/leaks.h): the live table by invocation of origin. */
static void leaks_read(struct pt_session *s)
{
	struct pt_report *rep = &s->rep;

	if (!s->invs.n)
		return;
	if (pt_leaks_read(&rep->leaked.leaks, bpf_map__fd(s->skel->maps.live),
			  bpf_map__max_entries(s->skel->maps.live),
			  bpf_map__fd(s->skel->maps.live_overflow), &s->invs, s->opt->sample_bytes))
		fprintf(stderr, "peaktrace: cannot read the live table: %s; leaks across invocations "
				"are incomplete\n", strerror(-rep->leaked.leaks.read_err));
	rep->leaked.by_stack = pt_leaks_per_stack(&rep->leaked.leaks, s->nstk);
	rep->leaked.stack_of = calloc(s->nstk ? s->nstk : 1, sizeof(*rep->leaked.stack_of));
	rep->leaked.nstacks = rep->leaked.stack_of ? s->nstk : 0;
	s->cin.leaked = (const int64_t (*)[2])rep->leaked.by_stack;
	s->cin.stack_out = rep->leaked.stack_of;
}

int pt_session_collect(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	struct pt_report *rep = &s->rep;
	int err;

	report_figures(s);
	s->nstk = stacks_span(s);
	err = pt_stack_table_read(s->skel->maps.stacks, s->nstk, &s->stacks_map);
	if (err) {
		fprintf(stderr, "peaktrace: cannot read stack tables: %s\n", strerror(err ? -err : errno));
		return EXIT_FAIL;
	}
	s->cin.stacks = &s->stacks_map;
	s->cin.stats = NULL;	/* read by batches from the map, never copied whole */
	s->cin.stats_fd = bpf_map__fd(s->skel->maps.stats);
	s->cin.nstacks = s->nstk;
	rss_kinds(s);
	s->cin.rss_kind = pt_rss_stack_kinds(&rep->rss, s->nstk);
	pt_rss_collect(&rep->rss, bpf_map__fd(s->skel->maps.rss_objs));
	s->cin.peak_seq = rep->totals.peak_seq;
	s->cin.rss_peak_seq = rep->rss.kernel.peak_seq;
	s->cin.count_shift = o->sample_bytes ? PT_SAMPLE_COUNT_SHIFT : 0;
	s->cin.py = NULL;
	s->cin.py_res = s->py_res;
	s->cin.cstats = &s->cstats;
	if (s->py_found)
		read_py_words(s);
	leaks_read(s);
	err = pt_collect(&s->cin, s->sym, &rep->prof, &rep->mstacks, &rep->nmstacks);
	if (pt_stack_table_failed(&s->stacks_map))
		fprintf(stderr, "peaktrace: %" PRIu64 " stack table entries could not be read: their "
				"allocations are under [unknown stack]\n", pt_stack_table_failed(&s->stacks_map));
	rep->errors[PT_ERR_PY_UNMATCHED] += s->cstats.py_unmatched;
	rep->execs.unnamed_stacks = s->cstats.exec_unnamed;
	rep->errors[PT_ERR_PY_CODE] += pt_py_unreadable(s->py_res);
	rep->errors[PT_ERR_PY_LAYOUT] += s->py.lost;
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

/* --max-peak: one line per invocation over it; EXIT_MAX_PEAK if any. */
static int check_max_peak(struct pt_session *s, int code)
{
	uint64_t max_peak = s->opt->max_peak;
	uint32_t k;

	for (k = 0; k < s->invs.n; k++) {
		const struct pt_inv_record *ir = &s->invs.r[k];
		char b1[32], b2[32];

		if (ir->seq == 0 || (uint64_t)ir->rss_peak <= max_peak)
			continue;
		fprintf(stderr, "peaktrace: invocation %" PRIu64 " (RequestId %s) peaked at %s RSS, over "
				"--max-peak %s; top stacks at its peak in the report\n",
			ir->seq, ir->id[0] ? ir->id : "?",
			pt_fmt_bytes(b1, sizeof(b1), (double)ir->rss_peak),
			pt_fmt_bytes(b2, sizeof(b2), (double)max_peak));
		code = EXIT_MAX_PEAK;
	}
	if (s->invs.dropped_over_max_peak) {
		fprintf(stderr, "peaktrace: and %" PRIu64 " more invocations over --max-peak, not kept in memory "
				"(--max-invocations-kept %u): in invocations.jsonl\n",
			s->invs.dropped_over_max_peak, s->invs.keep);
		code = EXIT_MAX_PEAK;
	}
	return code;
}

int pt_session_report(struct pt_session *s)
{
	const struct pt_options *o = s->opt;
	int code = EXIT_OK, err;

	/* First, so the reports can say what --max-output left out of them. */
	if (o->outdir && o->per_invocation)
		pt_report_invocation_graphs(o->outdir, &s->invs, &s->cin, s->sym, s->rep.comm, &s->rep.out);
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
		code = check_max_peak(s, code);
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
	if (s->wake_ep >= 0)
		close(s->wake_ep);
	if (s->pidfd >= 0)
		close(s->pidfd);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	if (s->py_words) {
		for (uint32_t k = 0; k < s->nstk; k++)
			free(s->py_words[k]);
		free(s->py_words);
	}
	pt_py_resolver_free(s->py_res);
	pt_pyalloc_free(&s->pyalloc);
	pt_py_info_free(&s->py);
	pt_stack_table_free(&s->stacks_map);
	pt_unwind_free(s->unw);
	pt_uwcache_close(&s->uwc);
	if (s->skel)
		pt_map_munmap(bpf_map__fd(s->skel->maps.stats));
	peaktrace_bpf__destroy(s->skel);
	pt_bpf_parts_free(&s->parts);
	if (s->sym)
		pt_sym_free(s->sym);
	pt_report_free(&s->rep);
	if (s->jsonl)
		fclose(s->jsonl);
	if (s->emf && s->emf != stdout)
		fclose(s->emf);
	pt_timeline_free(&s->tl);
	pt_inv_list_free(&s->invs);
	pt_allocator_free(&s->alloc);
	if (s->paths)
		pt_strv_free(s->paths, s->npaths);
	free(s->exe);
	free(s);
}
