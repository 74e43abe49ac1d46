// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sandbox.c — the runtime's memory cgroup and process: create, limit, measure, kill, remove.
 *
 * Lambda runs each execution environment in a memory-limited sandbox, reports the sandbox's
 * high-water mark as Max Memory Used, and OOM-kills the runtime when it goes over. We get the
 * same from a child memory cgroup, v2 or v1 (hosts still mount either, or both: a hybrid host
 * with the memory controller on v1 and an empty cgroup2 is common), created under our own
 * cgroup so the limits of whatever contains us still apply. Every sandbox (cold start) gets a
 * fresh cgroup, so the high-water mark starts again at each cold start as on Lambda.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "host.h"

#define SANDBOX_PREFIX "lambda-host."

static int read_text(const char *path, char *buf, size_t sz)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sz - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	return (int)n;
}

static int write_text(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		err = -errno;
	close(fd);
	return err;
}

static int cg_write(const struct sandbox *sb, const char *file, const char *val)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", sb->path, file);
	return write_text(p, val);
}

static bool cg_exists(const char *dir, const char *file)
{
	char p[PATH_MAX + 64];

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	return access(p, F_OK) == 0;
}

/* Is word one of the space/comma-separated tokens of list? */
static bool has_token(const char *list, const char *word)
{
	size_t wl = strlen(word);
	const char *p = list;

	while ((p = strstr(p, word))) {
		bool start = p == list || p[-1] == ' ' || p[-1] == ',' || p[-1] == '\n';
		char end = p[wl];

		if (start && (end == '\0' || end == ' ' || end == ',' || end == '\n'))
			return true;
		p += wl;
	}
	return false;
}

/* Mount points of the cgroup2 hierarchy and of the v1 hierarchy carrying "memory". */
static void find_mounts(char *v2, char *v1mem, size_t sz)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	v2[0] = v1mem[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], fstype[64], opts[1024];
		const char *dash = strstr(line, " - ");

		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS" */
		if (!dash || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(dash + 3, "%63s %*s %1023s", fstype, opts) != 2)
			continue;
		if (!strcmp(fstype, "cgroup2") && !v2[0])
			snprintf(v2, sz, "%s", mnt);
		else if (!strcmp(fstype, "cgroup") && has_token(opts, "memory") && !v1mem[0])
			snprintf(v1mem, sz, "%s", mnt);
	}
	fclose(f);
}

/* Our own cgroup path in the v2 hierarchy ("0::/x") or the v1 memory hierarchy ("N:memory:/x"). */
static void own_cgroups(char *v2, char *v1mem, size_t sz)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];

	v2[0] = v1mem[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		line[strcspn(line, "\n")] = '\0';
		*c2 = '\0';
		if (!strncmp(line, "0:", 2) && c1[1] == '\0')
			snprintf(v2, sz, "%s", c2 + 1);
		else if (has_token(c1 + 1, "memory"))
			snprintf(v1mem, sz, "%s", c2 + 1);
	}
	fclose(f);
}

/* A v2 parent must offer "memory" to its children; enabling it fails on a busy non-root group. */
static bool v2_usable(const char *dir)
{
	char p[PATH_MAX + 64], buf[1024];

	snprintf(p, sizeof(p), "%s/cgroup.controllers", dir);
	if (read_text(p, buf, sizeof(buf)) < 0 || !has_token(buf, "memory"))
		return false;
	snprintf(p, sizeof(p), "%s/cgroup.subtree_control", dir);
	if (read_text(p, buf, sizeof(buf)) >= 0 && has_token(buf, "memory"))
		return true;
	return write_text(p, "+memory") == 0;
}

static bool dir_writable(const char *dir)
{
	struct stat st;

	return !stat(dir, &st) && S_ISDIR(st.st_mode) && !access(dir, W_OK);
}

int sandbox_setup(struct sandbox *sb, const struct options *o)
{
	char m2[PATH_MAX], m1[PATH_MAX], c2[PATH_MAX], c1[PATH_MAX], cand[PATH_MAX];
	int i;

	memset(sb, 0, sizeof(*sb));
	if (o->no_cgroup)
		return 0;
	if (o->cgroup_parent) {
		if (!dir_writable(o->cgroup_parent))
			return -ENOENT;
		if (snprintf(sb->parent, sizeof(sb->parent), "%s", o->cgroup_parent) >= (int)sizeof(sb->parent))
			return -ENAMETOOLONG;
		if (cg_exists(sb->parent, "cgroup.controllers"))
			sb->mode = v2_usable(sb->parent) ? CG_V2 : CG_NONE;
		else if (cg_exists(sb->parent, "memory.limit_in_bytes"))
			sb->mode = CG_V1;
		return sb->mode == CG_NONE ? -EOPNOTSUPP : 0;
	}
	if (geteuid() != 0)
		return -EPERM;
	find_mounts(m2, m1, sizeof(m2));
	own_cgroups(c2, c1, sizeof(c2));
	/* v2 first, if it carries the memory controller: our own group, else the root. */
	for (i = 0; m2[0] && i < 2; i++) {
		if (snprintf(cand, sizeof(cand), "%s%s", m2, i == 0 ? c2 : "") >= (int)sizeof(cand))
			continue;
		if (i == 1 || (c2[0] && strcmp(c2, "/"))) {
			if (dir_writable(cand) && v2_usable(cand)) {
				strcpy(sb->parent, cand);
				sb->mode = CG_V2;
				return 0;
			}
		}
	}
	for (i = 0; m1[0] && i < 2; i++) {
		if (snprintf(cand, sizeof(cand), "%s%s", m1, i == 0 ? c1 : "") >= (int)sizeof(cand))
			continue;
		if (dir_writable(cand) && cg_exists(cand, "memory.limit_in_bytes")) {
			strcpy(sb->parent, cand);
			sb->mode = CG_V1;
			return 0;
		}
	}
	return -EOPNOTSUPP;
}

static int pids_in(const struct sandbox *sb, pid_t *pids, int max)
{
	char p[PATH_MAX + 32], buf[16384], *s, *end;
	int n = 0;

	if (!sb->path[0])
		return 0;
	snprintf(p, sizeof(p), "%s/cgroup.procs", sb->path);
	if (read_text(p, buf, sizeof(buf)) < 0)
		return 0;
	for (s = buf; n < max; s = end) {
		long v = strtol(s, &end, 10);

		if (end == s)
			break;
		if (v > 0)
			pids[n++] = (pid_t)v;
	}
	return n;
}

int sandbox_create(struct sandbox *sb, unsigned memory_mb)
{
	char bytes[32];
	int err;

	sb->max_used = 0;
	if (sb->mode == CG_NONE)
		return 0;
	if (snprintf(sb->path, sizeof(sb->path), "%s/" SANDBOX_PREFIX "%d.%u", sb->parent,
		     (int)getpid(), ++sb->seq) >= (int)sizeof(sb->path)) {
		sb->path[0] = '\0';
		return -ENAMETOOLONG;
	}
	if (mkdir(sb->path, 0755) && errno != EEXIST) {
		err = -errno;
		sb->path[0] = '\0';
		return err;
	}
	snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)memory_mb << 20);
	if (sb->mode == CG_V2) {
		err = cg_write(sb, "memory.max", bytes);
		/* Lambda has no swap: over the limit means the OOM killer, not paging. */
		cg_write(sb, "memory.swap.max", "0");
		/* Lambda loses the whole environment on OOM: kill the group, not one process. */
		cg_write(sb, "memory.oom.group", "1");
		sb->peak_file = cg_exists(sb->path, "memory.peak");
	} else {
		err = cg_write(sb, "memory.limit_in_bytes", bytes);
		/* memsw (memory + swap) must be >= the memory limit, so it is set second. */
		if (!err && cg_write(sb, "memory.memsw.limit_in_bytes", bytes))
			cg_write(sb, "memory.swappiness", "0");
		sb->peak_file = cg_exists(sb->path, "memory.max_usage_in_bytes");
	}
	if (err) {
		rmdir(sb->path);
		sb->path[0] = '\0';
	}
	return err;
}

void sandbox_kill(struct sandbox *sb, pid_t pgid, int sig)
{
	pid_t pids[1024];
	int i, n;

	if (pgid > 0)
		kill(-pgid, sig);
	if (!sb->path[0])
		return;
	/* cgroup.kill (v2, 5.14+) also catches processes that left the process group. */
	if (sig == SIGKILL && sb->mode == CG_V2)
		cg_write(sb, "cgroup.kill", "1");
	n = pids_in(sb, pids, 1024);
	for (i = 0; i < n; i++)
		kill(pids[i], sig);
}

void sandbox_destroy(struct sandbox *sb, pid_t pgid)
{
	pid_t pids[8];
	int i;

	if (!sb->path[0])
		return;
	/* Everything left in the sandbox dies with it; reap what was reparented to us. */
	for (i = 0; i < 200; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		sandbox_kill(sb, pgid, SIGKILL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (pids_in(sb, pids, 8) == 0)
			break;
		nanosleep(&ts, NULL);
	}
	for (i = 0; i < 100 && rmdir(sb->path) && errno == EBUSY; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (access(sb->path, F_OK) == 0)
		fprintf(stderr, "lambda-host: cannot remove cgroup %s: %s\n", sb->path, strerror(errno));
	sb->path[0] = '\0';
}

/* Sum of VmHWM over the sandbox's process group: the fallback when no cgroup counter exists. */
static uint64_t tree_hwm(pid_t pgid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	uint64_t sum = 0;

	if (!d || pgid <= 0) {
		if (d)
			closedir(d);
		return 0;
	}
	while ((de = readdir(d))) {
		char p[300], buf[4096], *s;
		long pgrp;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(p, sizeof(p), "/proc/%s/stat", de->d_name);
		/* "PID (COMM) STATE PPID PGRP ...": COMM may hold spaces and ')', so use the last ')'. */
		if (read_text(p, buf, sizeof(buf)) < 0 || !(s = strrchr(buf, ')')) ||
		    sscanf(s + 1, " %*c %*d %ld", &pgrp) != 1 || pgrp != pgid)
			continue;
		snprintf(p, sizeof(p), "/proc/%s/status", de->d_name);
		if (read_text(p, buf, sizeof(buf)) > 0 && (s = strstr(buf, "\nVmHWM:")))
			sum += strtoull(s + 7, NULL, 10) << 10;
	}
	closedir(d);
	return sum;
}

uint64_t sandbox_max_used(struct sandbox *sb, pid_t pgid)
{
	char p[PATH_MAX + 64], buf[64];
	uint64_t v = 0;

	if (sb->path[0] && sb->peak_file) {
		snprintf(p, sizeof(p), "%s/%s", sb->path,
			 sb->mode == CG_V2 ? "memory.peak" : "memory.max_usage_in_bytes");
		if (read_text(p, buf, sizeof(buf)) > 0)
			v = strtoull(buf, NULL, 10);
	} else {
		v = tree_hwm(pgid);
	}
	/* A high-water mark: it never goes down within one sandbox, whatever the source. */
	if (v > sb->max_used)
		sb->max_used = v;
	return sb->max_used;
}

uint64_t sandbox_oom_kills(const struct sandbox *sb)
{
	char p[PATH_MAX + 64], buf[1024], *s;

	if (!sb->path[0])
		return 0;
	snprintf(p, sizeof(p), "%s/%s", sb->path,
		 sb->mode == CG_V2 ? "memory.events" : "memory.oom_control");
	if (read_text(p, buf, sizeof(buf)) <= 0 || !(s = strstr(buf, "oom_kill ")))
		return 0;
	return strtoull(s + 9, NULL, 10);
}

/* PATH lookup in the parent: the child may only make async-signal-safe calls after fork(). */
static int resolve_cmd(const char *cmd, char *out, size_t outsz)
{
	const char *path = getenv("PATH"), *p;

	if (strchr(cmd, '/')) {
		snprintf(out, outsz, "%s", cmd);
		return access(out, X_OK) ? -errno : 0;
	}
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		struct stat st;

		snprintf(out, outsz, "%.*s/%s", (int)n, n ? p : ".", cmd);
		if (!stat(out, &st) && S_ISREG(st.st_mode) && !access(out, X_OK))
			return 0;
		p += n;
		if (*p == ':')
			p++;
	}
	return -ENOENT;
}

struct spawn_err {
	int stage;      /* 1 join cgroup, 2 chdir, 3 exec */
	int err;
};

pid_t runtime_spawn(struct sandbox *sb, const struct options *o, char *const envp[],
		    char *why, size_t whysz)
{
	static const char *stages[] = { "", "cannot join the sandbox cgroup",
					"cannot chdir to the task root", "cannot execute" };
	char exe[PATH_MAX], procs[PATH_MAX + 32];
	struct spawn_err se;
	pid_t parent = getpid(), pid;
	int pfd[2], devnull, err;
	ssize_t n;

	err = resolve_cmd(o->cmd[0], exe, sizeof(exe));
	if (err) {
		snprintf(why, whysz, "cannot execute %s: %s", o->cmd[0],
			 err == -ENOENT ? "not found" : strerror(-err));
		return err;
	}
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", sb->path);
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (pipe2(pfd, O_CLOEXEC)) {
		err = -errno;
		snprintf(why, whysz, "pipe: %s", strerror(errno));
		if (devnull >= 0)
			close(devnull);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		snprintf(why, whysz, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		if (devnull >= 0)
			close(devnull);
		return err;
	}
	if (pid == 0) {
		sigset_t none;
		int fd;

		/* Only async-signal-safe calls from here on: the parent has other threads. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		/* Own process group: Ctrl-C on our terminal is ours to forward, and kill(-pgid) works. */
		setpgid(0, 0);
		/*
		 * If lambda-host dies without cleaning up, the runtime must not outlive it. The signal
		 * follows the *thread* that forked: spawns only happen on the main thread, which lives
		 * as long as the process.
		 */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		se.err = 0;
		if (sb->path[0]) {
			/* "0" = the writing process: join before exec, so the new image is charged here. */
			fd = open(procs, O_WRONLY | O_CLOEXEC);
			if (fd < 0 || write(fd, "0", 1) != 1) {
				se = (struct spawn_err){ 1, errno };
				goto fail;
			}
			close(fd);
		}
		if (o->task_root && chdir(o->task_root)) {
			se = (struct spawn_err){ 2, errno };
			goto fail;
		}
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		execve(exe, o->cmd, envp);
		se = (struct spawn_err){ 3, errno };
fail:
		n = write(pfd[1], &se, sizeof(se));
		(void)n;
		_exit(127);
	}
	setpgid(pid, pid);
	close(pfd[1]);
	if (devnull >= 0)
		close(devnull);
	/* EOF (exec closed the CLOEXEC pipe) means the runtime is running. */
	do
		n = read(pfd[0], &se, sizeof(se));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == (ssize_t)sizeof(se)) {
		waitpid(pid, NULL, 0);
		snprintf(why, whysz, "%s%s%s: %s", stages[se.stage < 1 || se.stage > 3 ? 3 : se.stage],
			 se.stage == 3 ? " " : "", se.stage == 3 ? exe : "", strerror(se.err));
		return -(se.err ? se.err : EIO);
	}
	return pid;
}

/* Sandboxes left by a lambda-host that died without cleanup (SIGKILL): remove them. */
void sandbox_cleanup_stale(const struct sandbox *sb)
{
	DIR *d;
	struct dirent *de;

	if (sb->mode == CG_NONE || !(d = opendir(sb->parent)))
		return;
	while ((de = readdir(d))) {
		struct sandbox old = *sb;
		long owner;

		if (strncmp(de->d_name, SANDBOX_PREFIX, strlen(SANDBOX_PREFIX)))
			continue;
		owner = strtol(de->d_name + strlen(SANDBOX_PREFIX), NULL, 10);
		if (owner <= 0 || owner == getpid() || kill((pid_t)owner, 0) == 0 || errno != ESRCH)
			continue;
		if (snprintf(old.path, sizeof(old.path), "%s/%s", sb->parent, de->d_name) <
		    (int)sizeof(old.path))
			sandbox_destroy(&old, 0);
	}
	closedir(d);
}
