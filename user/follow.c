// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * follow.c — the sandbox coordinator (--follow, several -p).
 *
 * Every traced process image gets one full session: a child peaktrace in attach mode
 * (-p PID --held), writing DIR/proc-PID-COMM/, so everything a session does (allocator probes,
 * unwind tables, CPython, invocations, RSS attribution) works per process unchanged. What they
 * share is one BPF map, created here (struct pt_sandbox, bpf/sandbox.bpf.h): each session's
 * rss_stat handler folds its process's RSS into the sum there, so the sandbox's peak is the
 * kernel's peak of the sum.
 *
 * Following: the coordinator is the ptrace tracer of the launched command (or, with -p, of the
 * processes given) with PTRACE_O_TRACEFORK/VFORK/CLONE/EXEC, so descendants are traced too. A
 * new process is traced from its exec: at the exec stop its new image has not run one
 * instruction. Its allocator is not mapped yet (ld.so maps it), and attach mode finds it in
 * the maps, so the process is stepped syscall by syscall (PTRACE_SYSCALL: the loader's few
 * dozen) until a new executable mapping holds a malloc; there, before any code of that library
 * has run, its session is started and the process is held until the session says it traces
 * (--ready-fd). A second exec of a process ends its session (SIGINT: the report is written)
 * and starts another for the new image in the same sandbox slot.
 *
 * Not followed, and counted in the sandbox report: processes that end before any exec (a fork
 * that only runs the parent's code), processes past PT_SBX_SLOTS, sessions that fail to start.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/ptrace.h>
#include <elf.h>
#include <bpf/bpf.h>
#include "util/fmt.h"
#include "util/wake.h"
#include "target/proc.h"
#include "target/procmaps.h"
#include "target/launch.h"
#include "follow/sandbox.h"
#include "spare.h"
#include "follow.h"

/* How long the first spares may take to load (before anything is followed), and how many
 * syscalls a loader may make before it is let go without its allocator found. */
#define READY_TIMEOUT_MS 120000
#define MAX_STEPS 20000
/* How long a process is held at its exec, at most, for its session to trace it (from its exec
 * stop): past it, it is let go untraced, its session killed, and counted (hold_limit). Sessions
 * start side by side, not one after another (with 50 children exec'ing at once, each one's
 * hold was every session before it: up to 24 s here), at most PT_FOLLOW_LOADING BPF loads at
 * once (fresh sessions and spares still loading); the others wait their turn, held.
 * --follow-hold sets the hold (default PT_FOLLOW_HOLD_S). */
#define PT_FOLLOW_LOADING 2   /* the verifier's work is CPU bound: more than the cores only contend */
/* The sessions' default table sizes (--max-stacks, --max-live): a quarter of a lone run's. */
#define PT_FOLLOW_MAX_STACKS "16384"
#define PT_FOLLOW_MAX_LIVE "262144"
/* Spare sessions kept loaded ahead of need (session.h): a new image takes one and waits only
 * for its per-process work (allocator, unwind tables from the cache, probes), not for the BPF
 * load. Two, because a runtime's start is often two images within milliseconds (a bootstrap
 * script, a pyenv shim or `env node` execs the interpreter), faster than a replacement, started
 * as one is taken, could load; one more at the start for the launched command itself. Each
 * holds its BPF maps (~36 MiB at the follow defaults). */
#define PT_SPARES 2
#define PT_SPARE_SLOTS (PT_SPARES + 1)
/* A replacement loads while the followed processes run (a runtime's init, often): below their
 * priority, raised back when an image takes it before it is loaded. */
#define PT_SPARE_NICE 10

struct tracee {
	pid_t tid;
	bool fresh;        /* its first stop (auto-attached at fork/clone) is not a group stop */
	bool detaching;
};

struct proc {
	pid_t pid;         /* tgid */
	int slot;          /* in the sandbox map; -1: none yet */
	int img;           /* its current session's image index; -1: none */
	bool root;         /* launched, or given with -p */
	bool execd;
	bool stepping;     /* after an exec: syscall by syscall until its allocator is mapped */
	bool mmap_exec;    /* the syscall being stepped maps code */
	int mmap_fd;       /* from which of its fds */
	int steps;
	uint64_t exec_ns;
};

/* A session starting for an image: its process held (stopped) until the session traces it. */
struct pending {
	int img;           /* its image (f->img) */
	pid_t pid;         /* the process */
	pid_t sess;        /* its session; 0: waiting for a turn to start one */
	int ready_r;       /* the session's ready pipe (-1: none yet) */
	bool spare;        /* a spare's: PT_SPARE_UNFIT or an end before loading: a session of its own */
	bool loaded;       /* (a spare) it said PT_SPARE_LOADED */
	bool held;
	bool no_spare;     /* a spare could not take it: a session of its own */
	uint64_t deadline; /* CLOCK_MONOTONIC ns: let go untraced past it */
};

struct spare {
	pid_t pid;         /* 0: none */
	int order_w;       /* its order goes here (struct pt_spare_order) */
	int ready_r;       /* it says PT_SPARE_LOADED, then "1" (tracing) or PT_SPARE_UNFIT */
	bool loaded;
};

struct follow {
	const struct pt_options *opt;
	const char *outdir;
	char **base;       /* the sessions' options (ours but the coordinator's own) */
	int nbase;
	int map_fd;
	struct tracee *t;
	int nt;
	struct proc *p;
	int np;
	struct pt_sbx_image *img;
	pid_t *img_sess;   /* each image's session (child peaktrace) pid, 0 once it ended */
	bool *img_sigint;
	int nimg;
	struct pending *pend;
	int npend;
	struct pt_sbx_counters c;
	struct spare spare[PT_SPARE_SLOTS];
	bool spares_off;   /* a spare failed: the next images get sessions of their own */
	int nice0;         /* our own nice value, a spare's once taken */
	int nslots;
	pid_t root;        /* the launched command (launch mode) */
	bool root_exited;
	int root_status;   /* its wait status once it exited */
	bool supervised;   /* launch mode under a supervisor (--supervised, target/launch.h) */
	bool stopping;
	uint64_t start_ns;
	char self[4096];   /* our executable's path */
};

static volatile sig_atomic_t tick;

static void on_tick(int sig)
{
	(void)sig;
	tick = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* No SA_RESTART: a signal interrupts waitpid. A periodic tick bounds every wait. The stop
 * signals are a lone session's (target/launch.c): the first stops, a second one exits at once
 * (the kernel detaches every tracee; each session, in its own group, still writes its report),
 * or under a supervisor goes to the command. */
static void signals(void)
{
	struct sigaction sa = { 0 };
	struct itimerval it = { { 0, 100000 }, { 0, 100000 } };

	pt_stop_signals_catch("peaktrace: second signal: exiting now without sandbox.txt and "
			      "sandbox.json (each process's session still writes its report)\n");
	sa.sa_handler = on_tick;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
}

static void *grow(void *v, int n, size_t size)
{
	/* Doubling at powers of two: n is the count before the new element. */
	if (n && (n & (n - 1)))
		return v;
	return realloc(v, (n ? 2 * (size_t)n : 8) * size);
}

static struct tracee *tracee_get(struct follow *f, pid_t tid, bool create)
{
	void *v;

	for (int i = 0; i < f->nt; i++)
		if (f->t[i].tid == tid)
			return &f->t[i];
	if (!create || !(v = grow(f->t, f->nt, sizeof(*f->t))))
		return NULL;
	f->t = v;
	f->t[f->nt] = (struct tracee){ .tid = tid, .fresh = true };
	return &f->t[f->nt++];
}

static void tracee_drop(struct follow *f, pid_t tid)
{
	for (int i = 0; i < f->nt; i++)
		if (f->t[i].tid == tid) {
			f->t[i] = f->t[--f->nt];
			return;
		}
}

static struct proc *proc_get(struct follow *f, pid_t pid, bool create)
{
	void *v;

	for (int i = 0; i < f->np; i++)
		if (f->p[i].pid == pid)
			return &f->p[i];
	if (!create || !(v = grow(f->p, f->np, sizeof(*f->p))))
		return NULL;
	f->p = v;
	f->p[f->np] = (struct proc){ .pid = pid, .slot = -1, .img = -1 };
	return &f->p[f->np++];
}

/* ---- sessions ---------------------------------------------------------------------------- */

/* The sessions' options: ours without what only the coordinator does (-p, --follow, -o, -d,
 * the command) and with no status line; each session adds its own. */
static int build_base(struct follow *f, int argc, char **argv)
{
	int cmd_at = f->opt->cmd ? (int)(f->opt->cmd - argv) : argc;

	f->base = calloc((size_t)argc + 24, sizeof(char *));
	if (!f->base)
		return -ENOMEM;
	f->base[f->nbase++] = (char *)"peaktrace";
	for (int i = 1; i < cmd_at; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--") || !strcmp(a, "--follow"))
			continue;
		/* --supervised is about the launched command: the coordinator's alone. */
		if (!strcmp(a, "-p") || !strcmp(a, "--pid") || !strcmp(a, "-o") || !strcmp(a, "--output") ||
		    !strcmp(a, "-d") || !strcmp(a, "--duration") || !strcmp(a, "-i") ||
		    !strcmp(a, "--interval") || !strcmp(a, "--supervised")) {
			i++;
			continue;
		}
		if (!strncmp(a, "-p", 2) || !strncmp(a, "--pid=", 6) || !strncmp(a, "-o", 2) ||
		    !strncmp(a, "--output=", 9) || !strncmp(a, "-d", 2) || !strncmp(a, "--duration=", 11) ||
		    !strncmp(a, "-i", 2) || !strncmp(a, "--interval=", 11) || !strncmp(a, "--supervised=", 13))
			continue;
		f->base[f->nbase++] = argv[i];
	}
	f->base[f->nbase++] = (char *)"-q";
	f->base[f->nbase++] = (char *)"-i";
	f->base[f->nbase++] = (char *)"0";
	/* Every session's tables are kernel memory charged to our memory cgroup, which under a
	 * supervisor is the function's own (~110 MiB each at the defaults): smaller ones unless
	 * asked for (full tables are counted in each report as usual). */
	if (f->opt->max_stacks_auto) {
		f->base[f->nbase++] = (char *)"--max-stacks";
		f->base[f->nbase++] = (char *)PT_FOLLOW_MAX_STACKS;
	}
	if (f->opt->live_slots == PT_DEF_LIVE_SLOTS) {
		f->base[f->nbase++] = (char *)"--max-live";
		f->base[f->nbase++] = (char *)PT_FOLLOW_MAX_LIVE;
	}
	return 0;
}

/* A directory name from a comm: only [A-Za-z0-9._-]. */
static void dir_name(char *out, size_t cap, pid_t pid, const char *comm, int image)
{
	char c[32];
	size_t i;

	snprintf(c, sizeof(c), "%s", comm[0] ? comm : "process");
	for (i = 0; c[i]; i++)
		if (!((c[i] >= 'a' && c[i] <= 'z') || (c[i] >= 'A' && c[i] <= 'Z') ||
		      (c[i] >= '0' && c[i] <= '9') || c[i] == '.' || c[i] == '-' || c[i] == '_'))
			c[i] = '_';
	if (image > 1)
		snprintf(out, cap, "proc-%d-%s-%d", pid, c, image);
	else
		snprintf(out, cap, "proc-%d-%s", pid, c);
}

/* A session of the image im, or with im NULL a spare that reads its order from order_r. */
static void exec_session(struct follow *f, const struct pt_sbx_image *im, int ready_w, int order_r)
{
	char *argv[64 + 32], pid[16], fd[16], slot[16], rfd[16], ofd[16], dir[4200];
	int n = 0;

	for (int i = 0; i < f->nbase && n < 64; i++)
		argv[n++] = f->base[i];
	snprintf(fd, sizeof(fd), "%d", f->map_fd);
	snprintf(rfd, sizeof(rfd), "%d", ready_w);
	argv[n++] = (char *)"--sandbox-fd";
	argv[n++] = fd;
	argv[n++] = (char *)"--ready-fd";
	argv[n++] = rfd;
	if (im) {
		snprintf(pid, sizeof(pid), "%d", im->pid);
		snprintf(slot, sizeof(slot), "%d", im->slot);
		snprintf(dir, sizeof(dir), "%s/%s", f->outdir, im->dir);
		argv[n++] = (char *)"--sandbox-slot";
		argv[n++] = slot;
		if (im->held)
			argv[n++] = (char *)"--held";
		argv[n++] = (char *)"-o";
		argv[n++] = dir;
		argv[n++] = (char *)"-p";
		argv[n++] = pid;
	} else {
		snprintf(ofd, sizeof(ofd), "%d", order_r);
		argv[n++] = (char *)"--spare-fd";
		argv[n++] = ofd;
		fcntl(order_r, F_SETFD, 0);
	}
	argv[n] = NULL;
	/* The map and the ready pipe (and a spare's order pipe) are the fds the session inherits. */
	fcntl(f->map_fd, F_SETFD, 0);
	fcntl(ready_w, F_SETFD, 0);
	pt_sigmask_restore();   /* its main() blocks SIGCHLD again, keeping what we were started with */
	/* By our own path, so the session is named "peaktrace" in ps, not "exe". */
	execv(f->self[0] ? f->self : "/proc/self/exe", argv);
	execv("/proc/self/exe", argv);
	_exit(127);
}

/* ---- spares ------------------------------------------------------------------------------ */

static void spare_close(struct spare *sp)
{
	close(sp->order_w);
	close(sp->ready_r);
	sp->pid = 0;
}

/* A spare session started now (--follow only); nice: below the followed processes' priority. */
static void spare_start(struct follow *f, struct spare *sp, bool nice)
{
	int order[2], ready[2];
	pid_t pid;

	if (!f->opt->follow || f->spares_off || f->stopping || sp->pid)
		return;
	if (pipe2(order, O_CLOEXEC))
		return;
	if (pipe2(ready, O_CLOEXEC)) {
		close(order[0]);
		close(order[1]);
		return;
	}
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);   /* out of reach of our group's kill, as every session */
		if (nice)
			setpriority(PRIO_PROCESS, 0, f->nice0 + PT_SPARE_NICE);
		exec_session(f, NULL, ready[1], order[0]);
	}
	close(order[0]);
	close(ready[1]);
	*sp = (struct spare){ .pid = pid, .order_w = order[1], .ready_r = ready[0] };
	if (pid < 0) {
		spare_close(sp);
		return;
	}
	setpgid(pid, pid);
	f->c.spares_started++;
}

/* Spares started until n run. */
static void spares_fill(struct follow *f, int n, bool nice)
{
	int live = 0;

	for (int i = 0; i < PT_SPARE_SLOTS; i++)
		live += f->spare[i].pid != 0;
	for (int i = 0; i < PT_SPARE_SLOTS && live < n; i++)
		if (!f->spare[i].pid) {
			spare_start(f, &f->spare[i], nice);
			live += f->spare[i].pid != 0;
		}
}

/* Has it said PT_SPARE_LOADED yet (without waiting)? A spare that ended unused failed. */
static void spare_poll(struct follow *f, struct spare *sp)
{
	struct pollfd pfd = { .fd = sp->ready_r, .events = POLLIN };
	char b = 0;

	if (!sp->pid || sp->loaded || poll(&pfd, 1, 0) != 1)
		return;
	if (read(sp->ready_r, &b, 1) == 1 && b == PT_SPARE_LOADED) {
		sp->loaded = true;
		return;
	}
	f->c.spares_failed++;
	f->spares_off = true;
	kill(sp->pid, SIGKILL);
	spare_close(sp);
}

/* Before anything is followed: the first spares loaded (the command starts one BPF load later,
 * as it was held for its own session's before; what it starts finds them ready). */
static void spares_wait_loaded(struct follow *f)
{
	for (int i = 0; i < PT_SPARE_SLOTS; i++) {
		struct spare *sp = &f->spare[i];
		struct pollfd pfd = { .fd = sp->ready_r, .events = POLLIN };

		while (sp->pid && !sp->loaded) {
			int r = poll(&pfd, 1, READY_TIMEOUT_MS);

			if (r < 0 && errno == EINTR && !pt_stop_signal())
				continue;
			if (r == 1)
				spare_poll(f, sp);
			else
				break;   /* stopped, or it never loaded: the images take it as it is */
		}
	}
}

/* At the end: every spare no image took reads end of file and exits, writing nothing; one still
 * loading (a replacement, at a lower priority: seconds on a loaded machine) is killed, its load
 * of no use now. Waited for here, before the sandbox report, so none outlives us with its BPF
 * programs nor is left beside a command we stay the parent of. */
static void spares_end(struct follow *f)
{
	for (int i = 0; i < PT_SPARE_SLOTS; i++) {
		pid_t pid = f->spare[i].pid;

		if (!pid)
			continue;
		spare_poll(f, &f->spare[i]);   /* a failed one is killed, closed and counted */
		if (f->spare[i].pid) {
			if (!f->spare[i].loaded)
				kill(pid, SIGKILL);
			spare_close(&f->spare[i]);
		}
		while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
			;
	}
}

static int loads_now(const struct follow *f);

/* Replacements for the spares taken, while fewer than PT_FOLLOW_LOADING BPF loads are under way
 * (a burst of images would otherwise start a spare for each). */
static void spares_refill(struct follow *f)
{
	if (loads_now(f) < PT_FOLLOW_LOADING)
		spares_fill(f, PT_SPARES, true);
}

/* A session forked for the image: its pid (0: fork failed), its ready pipe in *ready_r. */
static pid_t new_session(struct follow *f, struct pt_sbx_image *im, int *ready_r)
{
	int ready[2];
	pid_t sess;

	*ready_r = -1;
	if (pipe2(ready, O_CLOEXEC))
		return 0;
	sess = fork();
	if (sess == 0) {
		/* Its own process group: a Ctrl-C or a supervisor's kill of our group does not
		 * reach it (a second SIGINT would drop its report); we stop it, once. */
		setpgid(0, 0);
		close(ready[0]);
		exec_session(f, im, ready[1], -1);
	}
	close(ready[1]);
	if (sess < 0) {
		close(ready[0]);
		return 0;
	}
	setpgid(sess, sess);   /* both sides: out of reach of our group's kill before its exec */
	*ready_r = ready[0];
	return sess;
}

/* The image to a spare (a loaded one first), without waiting: 0 if there is none. The spare
 * is replaced at once. */
static pid_t spare_give(struct follow *f, struct pt_sbx_image *im, int *ready_r, bool *loaded)
{
	struct pt_spare_order o = { .pid = im->pid, .slot = im->slot, .held = im->held };
	struct spare *sp = NULL;
	pid_t sess;
	size_t put = 0;

	for (int i = 0; i < PT_SPARE_SLOTS; i++) {
		spare_poll(f, &f->spare[i]);
		if (f->spare[i].pid && (!sp || (f->spare[i].loaded && !sp->loaded)))
			sp = &f->spare[i];
	}
	if (!sp)
		return 0;
	snprintf(o.dir, sizeof(o.dir), "%s/%s", f->outdir, im->dir);
	im->spare = sp->loaded ? PT_SBX_SPARE_LOADED : PT_SBX_SPARE_LOADING;
	setpriority(PRIO_PROCESS, sp->pid, f->nice0);   /* a process waits for it now */
	while (put < sizeof(o)) {
		ssize_t n = write(sp->order_w, (char *)&o + put, sizeof(o) - put);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		put += (size_t)n;
	}
	sess = sp->pid;
	*loaded = sp->loaded;
	*ready_r = sp->ready_r;   /* now the pending start's */
	close(sp->order_w);
	sp->pid = 0;
	sp->loaded = false;
	if (put != sizeof(o)) {
		kill(sess, SIGKILL);
		close(*ready_r);
		*ready_r = -1;
		im->spare = PT_SBX_SPARE_NONE;
		f->c.spares_failed++;
		f->spares_off = true;
		sess = 0;
	}
	spares_refill(f);
	return sess;
}

/* BPF loads under way: sessions started for an image, spares not loaded yet. */
static int loads_now(const struct follow *f)
{
	int n = 0;

	for (int i = 0; i < f->npend; i++)
		n += f->pend[i].sess && (!f->pend[i].spare || !f->pend[i].loaded);
	for (int i = 0; i < PT_SPARE_SLOTS; i++)
		n += f->spare[i].pid && !f->spare[i].loaded;
	return n;
}

/* A session for the pending start, if it has none: a spare's, else a fresh one when fewer than
 * PT_FOLLOW_LOADING load; else it waits its turn. */
static void pend_begin(struct follow *f, struct pending *pe, bool spare_ok)
{
	struct pt_sbx_image *im = &f->img[pe->img];

	if (pe->sess)
		return;
	/* A loaded spare; one still loading is a load under way already. */
	if (spare_ok && (pe->sess = spare_give(f, im, &pe->ready_r, &pe->loaded))) {
		pe->spare = true;
		f->img_sess[pe->img] = pe->sess;
		return;
	}
	if (loads_now(f) >= PT_FOLLOW_LOADING)
		return;
	pe->spare = false;
	pe->sess = new_session(f, im, &pe->ready_r);
	f->img_sess[pe->img] = pe->sess;
}

/* The pending start i ends: traced or not (why: the counter it adds to), its process let go. */
static void pend_end(struct follow *f, int i, bool traced, uint64_t *why)
{
	struct pending pe = f->pend[i];
	struct pt_sbx_image *im = &f->img[pe.img];
	struct proc *p = proc_get(f, pe.pid, false);

	f->pend[i] = f->pend[--f->npend];
	if (pe.ready_r >= 0)
		close(pe.ready_r);
	im->traced = traced;
	if (!traced) {
		/* Held too long, or failed: the process goes on untraced. (Not one already reaped:
		 * on_exit_status cleared it.) */
		if (pe.sess > 0 && f->img_sess[pe.img] == pe.sess)
			kill(pe.sess, SIGKILL);
		f->img_sess[pe.img] = 0;
		(*why)++;
	}
	if (pe.held && p)
		im->held_ns = now_ns() - p->exec_ns;
	if (pe.held)
		ptrace(PTRACE_CONT, pe.pid, 0, 0);
}

/* What a pending start's session said (without waiting): 1 traces, 0 nothing yet, -1 ended. */
static int pend_read(struct pending *pe)
{
	struct pollfd pfd = { .fd = pe->ready_r, .events = POLLIN };
	char b;

	while (pe->ready_r >= 0 && poll(&pfd, 1, 0) == 1) {
		if (read(pe->ready_r, &b, 1) != 1)
			return -1;
		if (b == '1')
			return 1;
		if (b != PT_SPARE_LOADED)
			return b == PT_SPARE_UNFIT ? -2 : -1;
		pe->loaded = true;
	}
	return 0;
}

/* Every pending start: traced ones let go, failed ones retried or let go, those past their
 * deadline let go untraced (hold_limit), waiting ones started when a turn is free. */
static void pend_poll(struct follow *f)
{
	uint64_t now = now_ns();

	for (int i = 0; i < f->npend; i++) {
		struct pending *pe = &f->pend[i];
		int r = pe->sess ? pend_read(pe) : 0;

		if (r == 1) {
			pend_end(f, i--, true, &f->c.session_failed);
			continue;
		}
		if (r < 0 && pe->spare && (r == -2 || !pe->loaded)) {
			/* The spare cannot take it (unfit), or never loaded: a session of its own. */
			if (r == -2) {
				f->c.spares_unfit++;
			} else {
				f->c.spares_failed++;
				f->spares_off = true;
			}
			if (f->img_sess[pe->img] == pe->sess)
				kill(pe->sess, SIGKILL);
			close(pe->ready_r);
			pe->ready_r = -1;
			pe->sess = 0;
			f->img_sess[pe->img] = 0;
			f->img[pe->img].spare = PT_SBX_SPARE_NONE;
			pe->no_spare = true;
			pe->spare = false;
			pend_begin(f, pe, false);
		} else if (r < 0) {
			pend_end(f, i--, false, &f->c.session_failed);
			continue;
		}
		if (now >= pe->deadline) {
			f->img[pe->img].hold_limit = true;
			pend_end(f, i--, false, &f->c.hold_limit);
			continue;
		}
	}
	for (int i = 0; i < f->npend; i++)
		pend_begin(f, &f->pend[i], !f->pend[i].no_spare);
}

/* Start a session for the process's image (held: it is stopped where no code of the new image
 * has run, and stays so until the session traces it, or --follow-hold from its exec): a
 * spare's, else a new one, without waiting for it (pend_poll does). false: none could be
 * started; the caller lets the process go now. */
static bool start_session(struct follow *f, struct proc *p, bool held)
{
	struct pt_sbx_image *im;
	struct pending *pe;
	int image = 1;
	void *v;

	if (p->slot < 0) {
		if (f->nslots >= PT_SBX_SLOTS) {
			f->c.slots_full++;
			return false;
		}
		p->slot = f->nslots++;
	}
	for (int i = 0; i < f->nimg; i++)
		image += f->img[i].pid == p->pid;
	if (!(v = grow(f->img, f->nimg, sizeof(*f->img))) || !((f->img = v)) ||
	    !(v = grow(f->img_sess, f->nimg, sizeof(*f->img_sess))) || !((f->img_sess = v)) ||
	    !(v = grow(f->img_sigint, f->nimg, sizeof(*f->img_sigint))) || !((f->img_sigint = v)) ||
	    !(v = grow(f->pend, f->npend, sizeof(*f->pend))) || !((f->pend = v))) {
		f->c.session_failed++;
		return false;
	}
	im = &f->img[f->nimg];
	memset(im, 0, sizeof(*im));
	im->pid = p->pid;
	im->slot = p->slot;
	im->image = image;
	im->held = held;
	im->session_rc = -1;
	{
		char raw[32];

		/* The process names itself: escaped once here, as every name it controls. */
		pt_proc_comm(p->pid, raw, sizeof(raw));
		pt_sanitize(im->comm, sizeof(im->comm), raw);
	}
	dir_name(im->dir, sizeof(im->dir), p->pid, im->comm, image);
	f->img_sess[f->nimg] = 0;
	f->img_sigint[f->nimg] = false;
	p->img = f->nimg++;
	pe = &f->pend[f->npend++];
	*pe = (struct pending){ .img = p->img, .pid = p->pid, .ready_r = -1, .held = held,
				.deadline = (held ? p->exec_ns : now_ns()) + (uint64_t)f->opt->follow_hold_ms * 1000000ull };
	if (!held)   /* given with -p: running, so no hold to bound; a BPF load's time at most */
		pe->deadline = now_ns() + READY_TIMEOUT_MS * 1000000ull;
	pend_begin(f, pe, true);
	return true;
}

/* Stop a session: one SIGINT (a second would drop its report). */
static void stop_session(struct follow *f, int i)
{
	if (i < 0 || i >= f->nimg || !f->img_sess[i] || f->img_sigint[i])
		return;
	kill(f->img_sess[i], SIGINT);
	f->img_sigint[i] = true;
}

/* ---- following ------------------------------------------------------------------------- */

static void resume(struct follow *f, pid_t tid, int sig)
{
	struct proc *p = proc_get(f, tid, false);

	ptrace(p && p->stepping ? PTRACE_SYSCALL : PTRACE_CONT, tid, 0, sig);
}

/* Does the open file fd (ours; regular) define malloc? 1 yes, 0 no, -1 not known. */
static int file_defines_malloc(int fd)
{
	struct pt_allocator a;
	char path[32];
	const char *paths[1] = { path };
	struct stat st;
	int r;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(&a, 0, sizeof(a));
	a.open_fd = -1;
	r = pt_find_allocator_in(paths, 1, &a);
	pt_allocator_free(&a);
	close(fd);
	return r == 0 ? 1 : r == -ENOENT ? 0 : -1;
}

/* The object the loader just mapped code of (the target's fd, opened through /proc/PID/fd:
 * the file it has open, whatever its root; a device or other non-regular file is no library),
 * 1 when it defines malloc. Only it: walking every mapped object at each mapping (the full
 * load-order search, pt_find_allocator) read node's ~100 MB executable again each time, 55 to
 * 130 ms a mapping at load 9, 0.6 s of node's hold. */
static int mapped_defines_malloc(pid_t pid, int tfd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, tfd);
	return file_defines_malloc(open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
}

/* A static executable has no loader: its malloc is in the image already mapped. A dynamic
 * one's interpreter may be the libc (musl): interp_malloc says if it defines malloc. */
static bool has_interp(pid_t pid, int *interp_malloc)
{
	char path[64], ipath[256];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	bool interp = true;   /* not readable: step as for a dynamic one */
	int fd;

	*interp_malloc = -1;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return true;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(ph) && eh.e_phnum < 256) {
		interp = false;
		for (int i = 0; i < eh.e_phnum; i++)
			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) ==
			    (ssize_t)sizeof(ph) && ph.p_type == PT_INTERP) {
				interp = true;
				/* Its path is the target's: opened inside its root (target/proc.h). */
				if (ph.p_filesz > 1 && ph.p_filesz < sizeof(ipath) &&
				    pread(fd, ipath, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz) {
					ipath[ph.p_filesz - 1] = 0;
					*interp_malloc = file_defines_malloc(pt_target_open(pid, ipath, 0));
				}
			}
	}
	close(fd);
	return interp;
}

static bool allocator_mapped(pid_t pid)
{
	struct pt_allocator a;
	bool found;

	memset(&a, 0, sizeof(a));
	a.open_fd = -1;
	found = pt_find_allocator(pid, &a) == 0;
	pt_allocator_free(&a);
	return found;
}

static void on_exec(struct follow *f, pid_t pid)
{
	unsigned long former = 0;
	struct proc *p = proc_get(f, pid, true);
	int interp_malloc;

	if (!ptrace(PTRACE_GETEVENTMSG, pid, 0, &former) && (pid_t)former != pid)
		tracee_drop(f, (pid_t)former);   /* a thread exec'd: it has the leader's id now */
	f->c.execs++;
	if (!p || f->stopping) {
		ptrace(PTRACE_CONT, pid, 0, 0);
		return;
	}
	p->execd = true;
	if (p->img >= 0)
		stop_session(f, p->img);   /* the old image's report is written; same slot after */
	p->img = -1;
	p->exec_ns = now_ns();
	p->steps = 0;
	p->mmap_exec = false;
	/* Static, or a loader that is the libc too (musl): its malloc is mapped already. An
	 * executable that defines malloc itself is taken by its session once the first library
	 * that does (libc) is mapped: it comes first in load order, and neither has run. */
	if (!has_interp(pid, &interp_malloc) || interp_malloc == 1 ||
	    (interp_malloc < 0 && allocator_mapped(pid))) {
		if (!start_session(f, p, true))   /* else let go once traced (pend_poll) */
			ptrace(PTRACE_CONT, pid, 0, 0);
		return;
	}
	p->stepping = true;
	ptrace(PTRACE_SYSCALL, pid, 0, 0);
}

/* pt_step_mapped_code, and at the mmap's entry the fd it maps. */
static bool step_mapped_code(pid_t tid, struct proc *p)
{
	struct ptrace_syscall_info si;

	memset(&si, 0, sizeof(si));
	if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(si), &si) > 0 && si.op == PTRACE_SYSCALL_INFO_ENTRY)
		p->mmap_fd = (int)si.entry.args[4];
	return pt_step_mapped_code(tid, &p->mmap_exec);
}

/* The code just mapped is a malloc's (not known: the full search decides). */
static bool mapped_malloc(struct proc *p)
{
	int r = mapped_defines_malloc(p->pid, p->mmap_fd);

	return r < 0 ? allocator_mapped(p->pid) : r == 1;
}

/* A syscall stop of a process being stepped after its exec. */
static void on_syscall(struct follow *f, pid_t tid)
{
	struct proc *p = proc_get(f, tid, false);

	if (!p || !p->stepping) {
		ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	}
	if (step_mapped_code(tid, p) && mapped_malloc(p)) {
		p->stepping = false;
		if (!start_session(f, p, true))
			ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	}
	if (++p->steps > MAX_STEPS) {
		/* Its loader never mapped a malloc we know: its session says what it finds. */
		f->c.alloc_not_found++;
		p->stepping = false;
		if (!start_session(f, p, true))
			ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	}
	ptrace(PTRACE_SYSCALL, tid, 0, 0);
}

/* fork, vfork, clone: a new tracee, auto-attached; a new process unless it shares the tgid. */
static void on_new_child(struct follow *f, pid_t parent, int ev)
{
	unsigned long msg = 0;
	char tgid[32];
	pid_t child;

	if (ptrace(PTRACE_GETEVENTMSG, parent, 0, &msg))
		return;
	child = (pid_t)msg;
	tracee_get(f, child, true);
	if (ev == PTRACE_EVENT_CLONE && pt_proc_status_field(child, "Tgid", tgid, sizeof(tgid)) == 0 &&
	    atoi(tgid) != child)
		return;   /* a thread */
	f->c.processes++;
	proc_get(f, child, true);
}

static void on_tracee_stop(struct follow *f, pid_t tid, int st)
{
	struct tracee *t = tracee_get(f, tid, true);
	int ev = (unsigned)st >> 16, sig = WSTOPSIG(st);

	if (f->stopping || (t && t->detaching)) {   /* stopping: every stop is let go */
		ptrace(PTRACE_DETACH, tid, 0, ev == 0 && sig != (SIGTRAP | 0x80) ? sig : 0);
		tracee_drop(f, tid);
		return;
	}
	if (sig == (SIGTRAP | 0x80)) {
		on_syscall(f, tid);
		return;
	}
	switch (ev) {
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE:
		on_new_child(f, tid, ev);
		resume(f, tid, 0);
		return;
	case PTRACE_EVENT_EXEC:
		on_exec(f, tid);
		return;
	case PTRACE_EVENT_STOP:
		if (t && t->fresh) {
			t->fresh = false;
			resume(f, tid, 0);
		} else if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
			ptrace(PTRACE_LISTEN, tid, 0, 0);   /* a group stop stays, as without us */
		} else {
			resume(f, tid, 0);
		}
		return;
	case 0:
		resume(f, tid, sig);   /* a signal, delivered unchanged */
		return;
	default:
		resume(f, tid, 0);
	}
}

static void on_exit_status(struct follow *f, pid_t pid, int st)
{
	struct proc *p;

	for (int i = 0; i < f->nimg; i++)
		if (f->img_sess[i] == pid) {
			f->img_sess[i] = 0;
			f->img[i].session_rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
			return;
		}
	for (int i = 0; i < PT_SPARE_SLOTS; i++)
		if (f->spare[i].pid == pid) {   /* a spare that ended before any image took it */
			spare_close(&f->spare[i]);
			f->c.spares_failed++;
			f->spares_off = true;
			return;
		}
	tracee_drop(f, pid);
	if ((p = proc_get(f, pid, false)) && !p->execd && !p->root)
		f->c.exited_without_exec++;
	if (pid == f->root) {
		f->root_exited = true;
		f->root_status = st;
		pt_stop_pass_to(0);   /* reaped: its pid may name another process */
	}
}

/* The command resolves through PATH to an executable (errno set when not). */
static bool cmd_exists(const char *cmd)
{
	char *path = pt_resolve_cmd(cmd);

	free(path);
	return path != NULL;
}

/* ---- start and stop ---------------------------------------------------------------------- */

/* Launch mode: the command, seized before its exec with every follow option. */
static int launch(struct follow *f)
{
	const long opts = PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
			  PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD;
	int go[2];
	char b = 1;
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(go[1]);
		pt_sigmask_restore();   /* the command gets the mask peaktrace was started with */
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		execvp(f->opt->cmd[0], f->opt->cmd);
		fprintf(stderr, "peaktrace: cannot execute %s: %s\n", f->opt->cmd[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	if (ptrace(PTRACE_SEIZE, pid, 0, opts)) {
		int err = -errno;

		close(go[1]);
		waitpid(pid, NULL, 0);
		return err;
	}
	f->root = pid;
	tracee_get(f, pid, true)->fresh = false;
	proc_get(f, pid, true)->root = true;
	if (write(go[1], &b, 1) != 1)
		return -errno;
	close(go[1]);
	return 0;
}

/* -p --follow: every thread of the process, seized (a fork from any of them is followed). */
static void seize_threads(struct follow *f, pid_t pid)
{
	const long opts = PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
			  PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD;
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	if (!(d = opendir(path))) {
		fprintf(stderr, "peaktrace: cannot follow PID %d's children: %s\n", pid, strerror(errno));
		return;
	}
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid <= 0)
			continue;
		if (ptrace(PTRACE_SEIZE, tid, 0, opts) == 0)
			tracee_get(f, tid, true)->fresh = false;
		else
			fprintf(stderr, "peaktrace: cannot follow what thread %d of PID %d starts: %s\n",
				tid, pid, strerror(errno));
	}
	closedir(d);
}

/* -p: each process's RSS in the sum before any session runs (rss_stat only says what
 * changes); then their sessions. */
static void attach_given(struct follow *f)
{
	struct pt_sandbox *sb = calloc(1, sizeof(*sb));
	__u32 zero = 0;

	for (int i = 0; i < f->opt->npids; i++) {
		struct proc *p = proc_get(f, f->opt->pids[i], true);

		if (!p || p->slot >= 0 || f->nslots >= PT_SBX_SLOTS)
			continue;
		p->root = true;
		p->slot = f->nslots++;
		if (sb) {
			int64_t rss = (int64_t)(pt_proc_status_bytes(p->pid, "RssAnon") +
						pt_proc_status_bytes(p->pid, "RssFile") +
						pt_proc_status_bytes(p->pid, "RssShmem"));

			sb->cur[p->slot] = sb->own_peak[p->slot] = sb->at_peak[p->slot] = rss;
			sb->sum += rss;
		}
	}
	if (sb) {
		sb->peak = sb->sum;
		sb->peak_ns = now_ns();
		bpf_map_update_elem(f->map_fd, &zero, sb, BPF_ANY);
		free(sb);
	}
	/* Seized first: what they start while their sessions load is followed too (held). */
	for (int i = 0; i < f->np && f->opt->follow; i++)
		seize_threads(f, f->p[i].pid);
	for (int i = 0; i < f->np; i++) {
		struct proc *p = &f->p[i];

		p->exec_ns = now_ns();
		start_session(f, p, false);
	}
}

static int live_sessions(const struct follow *f)
{
	int n = 0;

	for (int i = 0; i < f->nimg; i++)
		n += f->img_sess[i] != 0;
	return n + f->npend;   /* those waiting for a turn too */
}

/* Stop: every session once, every tracee detached (interrupted, then let go at its stop). */
static void begin_stop(struct follow *f)
{
	if (f->stopping)
		return;
	f->stopping = true;
	/* Processes still held for a session: let go untraced (detached now: they are stopped,
	 * no further stop would come to detach them at). */
	while (f->npend) {
		pid_t pid = f->pend[0].pid;
		bool held = f->pend[0].held;

		f->pend[0].held = false;
		pend_end(f, 0, false, &f->c.session_failed);
		if (held) {
			ptrace(PTRACE_DETACH, pid, 0, 0);
			tracee_drop(f, pid);
		}
	}
	for (int i = 0; i < f->nimg; i++)
		stop_session(f, i);
	for (int i = 0; i < f->nt; i++) {
		if (ptrace(PTRACE_INTERRUPT, f->t[i].tid, 0, 0) && errno == ESRCH) {
			f->t[i--] = f->t[--f->nt];
			continue;
		}
		f->t[i].detaching = true;
	}
}

static bool finished(struct follow *f, uint64_t stop_at)
{
	if (pt_stop_signal() || (stop_at && now_ns() >= stop_at) || (f->root && f->root_exited))
		begin_stop(f);
	if (!f->root && !live_sessions(f))
		begin_stop(f);   /* -p: every process given has ended (its session with it) */
	return f->stopping && !live_sessions(f) && !f->nt;
}

static void loop(struct follow *f)
{
	uint64_t stop_at = f->opt->duration > 0 ? now_ns() + (uint64_t)(f->opt->duration * 1e9) : 0;
	uint64_t stop_began = 0;

	while (!finished(f, stop_at)) {
		int st;
		pid_t r;

		if (f->stopping && !stop_began)
			stop_began = now_ns();
		/* A tracee that never stops again (gone unseen): not waited for past 5 s. */
		if (stop_began && !live_sessions(f) && now_ns() - stop_began > 5000000000ull)
			break;
		pend_poll(f);
		r = waitpid(-1, &st, __WALL);
		if (r < 0) {
			if (errno == ECHILD)
				break;
			continue;   /* EINTR: a signal or the tick */
		}
		if (WIFSTOPPED(st))
			on_tracee_stop(f, r, st);
		else if (WIFEXITED(st) || WIFSIGNALED(st))
			on_exit_status(f, r, st);
	}
}

static int report(struct follow *f)
{
	struct pt_sandbox *sb = calloc(1, sizeof(*sb));
	struct pt_sbx_report r;
	__u32 zero = 0;
	int err, code = EXIT_OK;

	if (!sb || bpf_map_lookup_elem(f->map_fd, &zero, sb)) {
		fprintf(stderr, "peaktrace: cannot read the sandbox map: %s\n", strerror(errno));
		free(sb);
		return EXIT_BPF;
	}
	memset(&r, 0, sizeof(r));
	r.outdir = f->outdir;
	r.sb = sb;
	r.img = f->img;
	r.nimg = f->nimg;
	r.c = f->c;
	r.hold_ms = f->opt->follow_hold_ms;
	r.top = f->opt->top < 3 ? f->opt->top : 3;
	r.start_ns = f->start_ns;
	if ((err = pt_sbx_report_write(&r, f->opt->quiet))) {
		fprintf(stderr, "peaktrace: cannot write %s/sandbox.txt or .json: %s\n", f->outdir,
			strerror(-err));
		code = EXIT_OUTPUT;
	} else {
		fprintf(stderr, "peaktrace: sandbox.txt and sandbox.json written to %s/\n", f->outdir);
	}
	for (int i = 0; i < f->nimg && code == EXIT_OK; i++)
		if (f->img[i].session_rc == EXIT_MAX_PEAK)
			code = EXIT_MAX_PEAK;
	free(sb);
	return code;
}

/* Under a supervisor, once every report is written: the command (detached, or dead) is still
 * ours to wait for, and its end becomes ours (target/launch.c). */
static int stay_parent(struct follow *f, int code)
{
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	struct pt_child c = { .pid = f->root, .go_fd = -1, .report_fd = -1, .exited = f->root_exited,
			      .status = f->root_status };

	/* The tick would be passed on as SIGALRM, which ends most commands. */
	setitimer(ITIMER_REAL, &off, NULL);
	return pt_child_stay_parent(&c, code);
}

int pt_follow_run(const struct pt_options *opt, int argc, char **argv)
{
	struct follow f = { .opt = opt, .outdir = opt->outdir, .map_fd = -1 };
	int err, code;

	if (opt->cmd && !cmd_exists(opt->cmd[0])) {
		fprintf(stderr, "peaktrace: cannot execute %s: %s\n", opt->cmd[0], strerror(errno));
		return errno == ENOENT ? EXIT_NO_PROCESS : EXIT_UNSUPPORTED;
	}
	for (int i = 0; i < opt->npids; i++)
		if (kill(opt->pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "peaktrace: no such process: %d\n", opt->pids[i]);
			return EXIT_NO_PROCESS;
		}
	f.start_ns = now_ns();
	{
		ssize_t n = readlink("/proc/self/exe", f.self, sizeof(f.self) - 1);

		f.self[n > 0 ? n : 0] = 0;
	}
	f.map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "sandbox", sizeof(__u32), sizeof(struct pt_sandbox),
				  1, NULL);
	if (f.map_fd < 0) {
		fprintf(stderr, "peaktrace: cannot create the sandbox map: %s\n", strerror(errno));
		return EXIT_BPF;
	}
	if (build_base(&f, argc, argv))
		return EXIT_FAIL;
	signals();
	errno = 0;
	f.nice0 = getpriority(PRIO_PROCESS, 0);
	if (errno)
		f.nice0 = 0;
	spares_fill(&f, opt->cmd ? PT_SPARE_SLOTS : PT_SPARES, false);
	spares_wait_loaded(&f);
	if (opt->cmd) {
		if ((err = launch(&f))) {
			fprintf(stderr, "peaktrace: cannot start %s: %s\n", opt->cmd[0], strerror(-err));
			return EXIT_FAIL;
		}
		/* As a lone launch: the command (forked into our group) and everything it starts
		 * stay in the group a supervisor kills; we and the sessions (groups of their own)
		 * do not, and write the reports when they die. */
		f.supervised = pt_launch_supervise(opt->supervised);
	} else {
		attach_given(&f);
	}
	fprintf(stderr, "peaktrace: following %s%s into %s/\n", opt->cmd ? opt->cmd[0] : "the processes given",
		opt->follow ? " and every process it starts" : "", f.outdir);
	if (f.supervised) {
		pt_stop_pass_to(f.root);
		pt_launch_supervised_say();
	}
	loop(&f);
	spares_end(&f);
	code = report(&f);
	close(f.map_fd);
	free(f.t);
	free(f.p);
	free(f.img);
	free(f.img_sess);
	free(f.img_sigint);
	free(f.pend);
	free(f.base);
	if (f.supervised)
		return stay_parent(&f, code);
	return code;
}
