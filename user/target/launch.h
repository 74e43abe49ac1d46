/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* launch.h — start a command held before exec (peaktrace -- CMD). */
#ifndef PEAKTRACE_LAUNCH_H
#define PEAKTRACE_LAUNCH_H
#include <stdbool.h>
#include <sys/types.h>

struct pt_child {
	pid_t pid;
	int go_fd;        /* write one byte: the child execs */
	int report_fd;    /* exec failure: errno comes back here */
	bool traced;      /* PTRACE_SEIZEd for the exit stop */
	bool exited;
	int status;       /* wait status once exited */
	/* Called at each exec stop (PTRACE_EVENT_EXEC: the new image is mapped, none of its code
	 * has run) with pt_child_poll's arg, the command's own exec included; the child goes on
	 * when it returns. */
	void (*at_exec)(void *arg);
	unsigned execs;   /* exec stops seen */
	/* Set by at_exec to keep the new image held past its exec stop: the child is stepped from
	 * system call to system call, and at_step is called after each mmap of code that succeeded
	 * (its loader mapping a library) until it returns true, or PT_STEP_MAX steps went by
	 * (stepped is then false and gave_up true). */
	bool step;
	bool gave_up;
	unsigned steps;
	bool mmap_exec;   /* the system call being stepped is an mmap of code */
	bool (*at_step)(void *arg);
};
#define PT_STEP_MAX 4096

/* At a system call stop of a process stepped through its loader (PTRACE_SYSCALL): true at the
 * exit of a successful file-backed mmap of code, a library mapped (glibc's and musl's loaders
 * alike); *pending carries the entry stop's verdict to the exit stop. */
bool pt_step_mapped_code(pid_t pid, bool *pending);

char *pt_resolve_cmd(const char *cmd);
/* The objects CMD will load, in load order: the executable first (a script's interpreter),
 * then what its dynamic loader lists. */
int pt_load_order(const char *cmd, char **exe, char ***paths, int *n);
void pt_strv_free(char **v, int n);

/* Fork the command, held before exec (and seized for its exit stop). setenv_list: nsetenv
 * NAME=VALUE strings put into the child's environment before exec (may be NULL). */
int pt_launch(char **argv, char *const *setenv_list, int nsetenv, struct pt_child *c);
/* Let the child exec. Returns 0, or -errno of a failed exec. */
int pt_launch_go(struct pt_child *c);
void pt_launch_abort(struct pt_child *c);
/* Reap/handle ptrace stops without blocking; calls at_exit at the exit stop.
 * Returns 1 once the child has exited. */
int pt_child_poll(struct pt_child *c, void (*at_exit)(void *), void *arg);
/* Stop tracing the child (detach) if it still runs. */
void pt_child_release(struct pt_child *c);

/* --supervised: auto (the default), yes, no. */
enum { SUPERVISED_AUTO = 0, SUPERVISED_YES, SUPERVISED_NO };

/* Under a supervisor (AWS's Runtime Interface Emulator starts its runtime in a new process group
 * and stops it with kill(-pgid, SIGKILL)): true when peaktrace leads its own process group, does
 * not lead its session, and that group is not the foreground group of a controlling terminal
 * (interactive use, where Ctrl-C must reach peaktrace and the command alike). */
bool pt_launch_supervised(void);
/* Leave the process group peaktrace leads for its parent's, once the child was forked into it:
 * the supervisor's kill of the group then kills the command alone. 0 (also when there is nothing
 * to leave), or -errno (EPERM: peaktrace leads its session and cannot leave; ESRCH: the parent's
 * group has its leader outside peaktrace's PID namespace and cannot be named). */
int pt_launch_leave_group(void);
/* The choice for a launch (a lone command, or the --follow coordinator's), made once the command
 * was forked into peaktrace's group: want is SUPERVISED_*; when supervised, peaktrace leaves the
 * group (a failure is said on stderr: the kill would then take peaktrace too). */
bool pt_launch_supervise(int want);
/* The line that says so on stderr ("peaktrace: under a supervisor: ..."). */
void pt_launch_supervised_say(void);

/* Stop signals, for whatever traces a launched command: the first SIGINT, SIGTERM or SIGHUP is
 * kept (pt_stop_signal, 0 until then) and nothing more (no SA_RESTART: a blocking call returns
 * EINTR); a later one goes to the process pt_stop_pass_to named (under a supervisor; 0: none),
 * or else makes peaktrace exit at once (128 + the signal), writing second_msg (may be NULL). */
void pt_stop_signals_catch(const char *second_msg);
int pt_stop_signal(void);
void pt_stop_pass_to(pid_t pid);

/* After tracing, under a supervisor: stay the (detached) child's parent until it exits, passing
 * SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM and SIGWINCH to it, then end as it
 * ended: its exit status is returned, the signal that killed it is raised on peaktrace. code:
 * peaktrace's own exit code, said on stderr when not 0, as the command's replaces it. */
int pt_child_stay_parent(struct pt_child *c, int code);
#endif
