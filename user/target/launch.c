// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * launch.c — start a command held before exec, and find the objects it will load.
 *
 * To trace "from the first malloc", probes must be attached before the program runs, so the
 * allocator must be known before exec: the dynamic loader itself answers that (`ld.so --list`,
 * which is what ldd runs; it maps and relocates but runs no code of the program).
 * The child is PTRACE_SEIZEd with PTRACE_O_TRACEEXIT and PTRACE_O_TRACEEXEC: it stops at each
 * exec, before the new image runs (probes and detection are redone for it there: a wrapper
 * script that execs the real program), and once at exit, with
 * its mm intact, so the symbolizer can read its final mappings and its VmHWM.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#include <linux/ptrace.h>
#include "util/stop.h"
#include "util/wake.h"
#include "target/launch.h"

/* Resolve CMD through PATH like execvp. Returns malloc'd path or NULL (errno set). */
char *pt_resolve_cmd(const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (strchr(cmd, '/')) {
		if (access(cmd, X_OK))
			return NULL;
		return realpath(cmd, NULL);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *end = strchr(path, ':');
		size_t len = end ? (size_t)(end - path) : strlen(path);
		struct stat st;

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? path : ".", cmd);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return realpath(buf, NULL);
		path += len + (end ? 1 : 0);
		if (!end)
			break;
	}
	errno = ENOENT;
	return NULL;
}

/* "#!/bin/sh -e" scripts run their interpreter: that is the process we will trace. */
static char *script_interpreter(const char *path)
{
	char line[512], *p, *e;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	if (!fgets(line, sizeof(line), f) || strncmp(line, "#!", 2)) {
		fclose(f);
		return NULL;
	}
	fclose(f);
	for (p = line + 2; *p == ' ' || *p == '\t'; p++)
		;
	for (e = p; *e && *e != ' ' && *e != '\t' && *e != '\n'; e++)
		;
	*e = 0;
	return *p ? strdup(p) : NULL;
}

static char *elf_interp(const char *path)
{
	char *interp = NULL;
	size_t n, i;
	Elf *e;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_getphdrnum(e, &n) == 0) {
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_INTERP)
				continue;
			interp = calloc(1, ph.p_filesz + 1);
			if (interp && pread(fd, interp, ph.p_filesz, ph.p_offset) != (ssize_t)ph.p_filesz) {
				free(interp);
				interp = NULL;
			}
			break;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return interp;
}

void pt_strv_free(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int pt_load_order(const char *cmd, char **exe_out, char ***paths_out, int *n_out)
{
	char *exe, *script, *interp;
	char **v = NULL, line[4096];
	int n = 0, pfd[2];
	pid_t pid;
	FILE *f;

	*paths_out = NULL;
	*n_out = 0;
	exe = pt_resolve_cmd(cmd);
	if (!exe)
		return -errno;
	script = script_interpreter(exe);
	if (script) {
		free(exe);
		exe = pt_resolve_cmd(script);
		free(script);
		if (!exe)
			return -errno;
	}
	v = calloc(64, sizeof(*v));
	if (!v) {
		free(exe);
		return -ENOMEM;
	}
	v[n++] = strdup(exe);
	interp = elf_interp(exe);
	if (!interp)
		goto done;  /* static: the executable is everything */
	if (pipe2(pfd, O_CLOEXEC)) {
		free(interp);
		goto done;
	}
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDWR);

		pt_sigmask_restore();
		dup2(pfd[1], 1);
		if (devnull >= 0)
			dup2(devnull, 2);
		execl(interp, interp, "--list", exe, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	f = fdopen(pfd[0], "r");
	/* Lines: "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or
	 * "\t/lib64/ld-linux-x86-64.so.2 (0x...)" or "\tlinux-vdso.so.1 (0x...)". */
	while (f && fgets(line, sizeof(line), f) && n < 63) {
		char *p = strstr(line, "=> "), *e;

		p = p ? p + 3 : line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != '/')
			continue;
		e = strstr(p, " (0x");
		if (e)
			*e = 0;
		else
			p[strcspn(p, "\n")] = 0;
		v[n++] = strdup(p);
	}
	if (f)
		fclose(f);
	else
		close(pfd[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	free(interp);
done:
	*exe_out = exe;
	*paths_out = v;
	*n_out = n;
	return 0;
}

int pt_launch(char **argv, char *const *setenv_list, int nsetenv, struct pt_child *c)
{
	int go[2], report[2];
	int err;

	memset(c, 0, sizeof(*c));
	if (pipe2(go, O_CLOEXEC) || pipe2(report, O_CLOEXEC))
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		char b;

		close(go[1]);
		close(report[0]);
		pt_sigmask_restore();   /* the command gets the mask peaktrace was started with */
		/* Held here until the probes are attached. EOF means the tracer gave up. */
		if (read(go[0], &b, 1) != 1)
			_exit(127);
		/* --compare-env: the setting is the command's alone, not the tracer's. */
		for (int i = 0; i < nsetenv; i++)
			putenv(setenv_list[i]);
		execvp(argv[0], argv);
		err = errno;
		if (write(report[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(report[1]);
	c->go_fd = go[1];
	c->report_fd = report[0];
	/* Seize (no stop now); stop only at exit, when the mm is still there. */
	if (ptrace(PTRACE_SEIZE, c->pid, 0, PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC |
		   PTRACE_O_TRACESYSGOOD) == 0)
		c->traced = true;
	return 0;
}

int pt_launch_go(struct pt_child *c)
{
	char b = 1;
	int err = 0;
	ssize_t r;

	if (write(c->go_fd, &b, 1) != 1)
		return -errno;
	close(c->go_fd);
	c->go_fd = -1;
	/* The report pipe closes on a successful exec (CLOEXEC); a failed exec writes errno. */
	r = read(c->report_fd, &err, sizeof(err));
	close(c->report_fd);
	c->report_fd = -1;
	if (r == (ssize_t)sizeof(err))
		return -err;
	return 0;
}

void pt_launch_abort(struct pt_child *c)
{
	if (c->go_fd >= 0)
		close(c->go_fd);   /* child reads EOF and exits */
	c->go_fd = -1;
	if (c->pid > 0)
		waitpid(c->pid, NULL, __WALL);
}

bool pt_step_mapped_code(pid_t pid, bool *pending)
{
	struct ptrace_syscall_info si;

	memset(&si, 0, sizeof(si));
	if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, sizeof(si), &si) <= 0)
		return false;
	if (si.op == PTRACE_SYSCALL_INFO_ENTRY)
		*pending = si.entry.nr == SYS_mmap && (si.entry.args[2] & PROT_EXEC) &&
			   (int)si.entry.args[4] >= 0;
	return si.op == PTRACE_SYSCALL_INFO_EXIT && *pending && !si.exit.is_error;
}

/* A system call stop while stepping: true to go on stepping; at_step runs after each mmap of
 * code that succeeded. */
static bool step_syscall(struct pt_child *c, void *arg)
{
	if (!c->step)
		return false;
	if (pt_step_mapped_code(c->pid, &c->mmap_exec) && c->at_step && c->at_step(arg)) {
		c->step = false;
		return false;
	}
	if (++c->steps > PT_STEP_MAX) {
		c->step = false;
		c->gave_up = true;
		return false;
	}
	return true;
}

int pt_child_poll(struct pt_child *c, void (*at_exit)(void *), void *arg)
{
	int st;
	pid_t r;

	for (unsigned spins = 0;;) {
		r = waitpid(c->pid, &st, WNOHANG | __WALL);
		/* Stepping a new image through its loader: its next system call stop comes within
		 * microseconds; waiting here for up to 50 ms keeps a hold of ~100 steps from taking
		 * ~100 turns of the caller's poll loop. */
		if (r == 0 && c->step && spins++ < 5000) {
			usleep(10);
			continue;
		}
		if (r <= 0)
			return c->exited;
		spins = 0;
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			c->exited = true;
			c->status = st;
			return 1;
		}
		if (!WIFSTOPPED(st))
			continue;
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
			/* Exit stop: the process is gone for the program but its mm is intact. */
			if (at_exit)
				at_exit(arg);
			ptrace(PTRACE_DETACH, c->pid, 0, 0);
			c->traced = false;
			continue;
		}
		if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8))) {
			/* Exec stop: ptrace stops are not reported to the real parent, so holding
			 * the new image here is invisible to it (unlike a SIGSTOP). */
			c->execs++;
			c->step = false;
			c->steps = 0;
			if (c->at_exec)
				c->at_exec(arg);
			ptrace(c->step ? PTRACE_SYSCALL : PTRACE_CONT, c->pid, 0, 0);
			continue;
		}
		if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
			/* A system call stop (TRACESYSGOOD) of a new image held past its exec. */
			ptrace(step_syscall(c, arg) ? PTRACE_SYSCALL : PTRACE_CONT, c->pid, 0, 0);
			continue;
		}
		if (st >> 16 == PTRACE_EVENT_STOP) {
			/* Group stop (SIGSTOP and friends): stay stopped, as without us. */
			ptrace(PTRACE_LISTEN, c->pid, 0, 0);
			continue;
		}
		/* Signal-delivery stop: deliver the signal unchanged. */
		ptrace(PTRACE_CONT, c->pid, 0, WSTOPSIG(st));
	}
}

void pt_child_release(struct pt_child *c)
{
	if (c->traced && !c->exited) {
		/* Detaching needs a stopped tracee: interrupt, then detach. */
		if (ptrace(PTRACE_INTERRUPT, c->pid, 0, 0) == 0) {
			int st;

			if (waitpid(c->pid, &st, __WALL) == c->pid && WIFSTOPPED(st)) {
				int sig = 0;

				if (st >> 16 != PTRACE_EVENT_STOP && st >> 8 != (SIGTRAP | (PTRACE_EVENT_EXIT << 8)) &&
				    st >> 8 != (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
					sig = WSTOPSIG(st);
				ptrace(PTRACE_DETACH, c->pid, 0, sig);
			} else if (WIFEXITED(st) || WIFSIGNALED(st)) {
				c->exited = true;
				c->status = st;
			}
		}
		c->traced = false;
	}
}

/*
 * Under a supervisor. AWS's Runtime Interface Emulator starts the runtime's command in a new
 * process group and stops or resets it with kill(-pgid, SIGKILL); put into that command to
 * trace the cold start, peaktrace leads the group and would die with the runtime, before a word
 * of the report. A shell's job control makes the same kind of group for an interactive command,
 * but makes it the terminal's foreground group: there Ctrl-C must keep reaching peaktrace and
 * the command together, so peaktrace stays. A session leader (setsid) cannot leave its group.
 */
bool pt_launch_supervised(void)
{
	pid_t pg = getpgrp();
	bool fg = false;
	int fd;

	if (pg != getpid() || getsid(0) == getpid())
		return false;
	fd = open("/dev/tty", O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		fg = tcgetpgrp(fd) == pg;
		close(fd);
	}
	return !fg;
}

int pt_launch_leave_group(void)
{
	pid_t to = getpgid(getppid());

	/* The command, forked already, stays in the group (it keeps our pid as its id while it
	 * has a member): the supervisor's kill reaches it and not us. The parent's group is the
	 * one group of this session we know to exist. */
	if (getpgrp() != getpid())
		return 0;
	if (to < 0)
		return -errno;
	/* 0: the group's leader is outside our PID namespace (a container whose first process
	 * does not lead its own group, unlike runc's, which calls setsid): it cannot be named. */
	if (to == 0)
		return -ESRCH;
	if (to != getpgrp() && setpgid(0, to))
		return -errno;
	return 0;
}

bool pt_launch_supervise(int want)
{
	bool yes = want == SUPERVISED_YES || (want == SUPERVISED_AUTO && pt_launch_supervised());
	int err;

	if (yes && (err = pt_launch_leave_group()))
		fprintf(stderr, "peaktrace: --supervised: cannot leave process group %d: %s; a kill of "
				"that group kills peaktrace too, without a report\n", (int)getpgrp(),
			err == -ESRCH ? "the parent's group is outside this PID namespace" :
			err == -EPERM ? "peaktrace leads its session" : strerror(-err));
	return yes;
}

void pt_launch_supervised_say(void)
{
	fprintf(stderr, "peaktrace: under a supervisor: the command is left running when tracing "
			"stops, and peaktrace stays its parent until it exits (--supervised)\n");
}

/*
 * Stop signals. The first SIGINT/SIGTERM/SIGHUP asks for the orderly stop (the report). A later
 * one, under a supervisor, goes to the command: the report is still written, and the command,
 * which the supervisor relies on, is the one to ask (what it does with the signal is its own).
 * Otherwise a later one exits at once, without a report: whoever sends it will not wait for the
 * orderly stop. Nothing is left behind by _exit: the kernel closes the probes' fds (detaching
 * them) and detaches and resumes every ptraced process as its tracer exits.
 */
static volatile sig_atomic_t first_stop, pass_to;
static const char *second_msg;

static void on_stop_signal(int sig)
{
	if (first_stop && pass_to > 0) {
		kill(pass_to, sig);
		return;
	}
	if (first_stop) {
		if (second_msg) {
			ssize_t w = write(STDERR_FILENO, second_msg, strlen(second_msg));

			(void)w;
		}
		_exit(128 + sig);
	}
	first_stop = sig;
	pt_stop_request(sig);   /* for the long readers (util/stop.h) */
}

void pt_stop_signals_catch(const char *msg)
{
	struct sigaction sa;

	second_msg = msg;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int pt_stop_signal(void)
{
	return first_stop;
}

void pt_stop_pass_to(pid_t pid)
{
	pass_to = pid;
}

static void pass_signal(int sig)
{
	if (pass_to > 0)
		kill(pass_to, sig);
}

int pt_child_stay_parent(struct pt_child *c, int code)
{
	static const int passed[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM,
				      SIGWINCH };
	struct rlimit no_core = { 0, 0 };
	struct sigaction sa;
	int st = c->status, sig;
	sigset_t set;

	if (code != 0)
		fprintf(stderr, "peaktrace: exit code %d replaced by the command's (--supervised)\n", code);
	if (!c->exited) {
		pass_to = c->pid;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = pass_signal;
		sigemptyset(&sa.sa_mask);
		for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++)
			sigaction(passed[i], &sa, NULL);
		for (;;) {
			if (waitpid(c->pid, &st, __WALL) < 0) {
				if (errno == EINTR)
					continue;
				return 1;
			}
			if (!WIFSTOPPED(st))
				break;
			/* Still traced (the detach failed): let go now, its signal delivered. */
			ptrace(PTRACE_DETACH, c->pid, 0, st >> 16 ? 0 : WSTOPSIG(st));
		}
		pass_to = 0;
		c->exited = true;
		c->status = st;
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	/* Ended by a signal: the supervisor must see the same end (RIE reports "signal: killed").
	 * Not our core dump, though: the command's own was its to write. */
	sig = WTERMSIG(st);
	setrlimit(RLIMIT_CORE, &no_core);
	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
	return 128 + sig;
}
