// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * lambda-host — what `docker run ... aws-lambda-rie` gives a developer, without Docker.
 *
 * A Runtime API server and an RIE-compatible invoke endpoint on loopback, the runtime command
 * started with Lambda's environment inside a memory cgroup sized like the function, Lambda's
 * START/END/REPORT lines with Max Memory Used measured as Lambda does (the sandbox high-water
 * mark), and Lambda's answers when the runtime errors, times out or is OOM-killed.
 *
 * main(): parse args -> sandbox setup -> listeners -> spawn runtime -> loop -> shutdown, with one
 * cleanup path. The main thread owns the runtime process; see host.h for who owns what.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "host.h"

#define LH_VERSION "0.1"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

struct host H = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.changed = PTHREAD_COND_INITIALIZER,
	.kick_fd = -1,
	.opt = {
		.memory_mb = 128,
		.runtime_port = 9101,   /* off RIE's 9001, so both can run side by side */
		.invoke_port = 8180,     /* off RIE's 8080 */
		.handler = "function.handler",
		.function_name = "function",
		.timeout_s = 3.0,
		.init_timeout_s = INIT_TIMEOUT_S,
	},
};

static bool events_done;           /* guarded by H.lock */

/* ---- arguments ---- */

const char *argp_program_version = "lambda-host " LH_VERSION;
const char *argp_program_bug_address = NULL;
static const char doc[] =
"Run a Lambda runtime locally as Lambda does: Runtime API, invoke endpoint,\n"
"memory cgroup, Lambda's environment and REPORT lines. Loopback only.\n"
"\n"
"USAGE: lambda-host [OPTIONS] -- CMD [ARGS...]\n"
"       then: invoke '{\"mb\": 64}'  or POST the event to\n"
"       http://127.0.0.1:8180/2015-03-31/functions/function/invocations"
"\v"
"EXAMPLES:\n"
"  lambda-host -- build/tools/functions/oom     # RIE-style, ports 9101/8180\n"
"  lambda-host -m 256 -t 10 -- ./bootstrap      # 256 MB sandbox, 10 s timeout\n"
"  lambda-host --handler function.handler -- \\\n"
"      python3 tools/functions/python/bootstrap.py\n"
"  lambda-host -E events.jsonl -- build/tools/functions/leaky  # replay, exit\n"
"  lambda-host --ready-file /tmp/ready -q -- ./fn &  # scripts: wait for file\n"
"\n"
"The runtime gets AWS_LAMBDA_RUNTIME_API, _HANDLER, LAMBDA_TASK_ROOT,\n"
"AWS_LAMBDA_FUNCTION_{MEMORY_SIZE,NAME,VERSION}, AWS_REGION, TZ=:UTC and\n"
"AWS_LAMBDA_LOG_{GROUP,STREAM}_NAME on top of this environment. Lambda's\n"
"log lines (START, END, REPORT) go to stdout, lambda-host's notices to\n"
"stderr. With --events each response is also printed on stdout, one a line.\n"
"\n"
"Exit codes: 0 ok (also after SIGINT/SIGTERM), 1 failure, 2 usage.\n";

enum {
	OPT_RUNTIME_PORT = 1000, OPT_INVOKE_PORT, OPT_HANDLER, OPT_READY, OPT_PIDFILE, OPT_TASK_ROOT,
	OPT_REGION, OPT_CGROUP_PARENT, OPT_NO_CGROUP, OPT_INIT_TIMEOUT,
};

static const struct argp_option opts[] = {
	{ "memory", 'm', "MB", 0, "Function memory size: the cgroup limit (default 128)", 0 },
	{ "timeout", 't', "SECONDS", 0, "Invocation timeout, then the runtime is killed (default 3)", 0 },
	{ "init-timeout", OPT_INIT_TIMEOUT, "SECONDS", 0, "Limit on runtime start to first /next (default 10)", 0 },
	{ "runtime-port", OPT_RUNTIME_PORT, "PORT", 0, "Runtime API port (default 9101, 0 = any)", 0 },
	{ "invoke-port", OPT_INVOKE_PORT, "PORT", 0, "Invoke endpoint port (default 8180, 0 = any)", 0 },
	{ "handler", OPT_HANDLER, "NAME", 0, "_HANDLER (default function.handler)", 0 },
	{ "function-name", 'n', "NAME", 0, "AWS_LAMBDA_FUNCTION_NAME (default function)", 0 },
	{ "region", OPT_REGION, "REGION", 0, "AWS_REGION (default $AWS_REGION or us-east-1)", 0 },
	{ "task-root", OPT_TASK_ROOT, "DIR", 0, "LAMBDA_TASK_ROOT and cwd (default: current dir)", 0 },
	{ "env", 'e', "NAME=VALUE", 0, "Extra variable for the function (repeatable)", 0 },
	{ "events", 'E', "FILE", 0, "Invoke each line of FILE (JSON Lines, - = stdin) in turn, then exit", 0 },
	{ "ready-file", OPT_READY, "PATH", 0, "Write pid, ports, runtime pid, cgroup to PATH when ready", 0 },
	{ "pid-file", OPT_PIDFILE, "PATH", 0, "Write the runtime pid to PATH at each (re)start", 0 },
	{ "cgroup-parent", OPT_CGROUP_PARENT, "DIR", 0, "Create the sandbox cgroup under DIR", 0 },
	{ "no-cgroup", OPT_NO_CGROUP, NULL, 0, "No cgroup: no limit, Max Memory Used from VmHWM", 0 },
	{ "quiet", 'q', NULL, 0, "No notices on stderr, only Lambda's log lines", 0 },
	{ "verbose", 'v', NULL, 0, "Also print libmicrohttpd's messages", 0 },
	{},
};

static void die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "lambda-host: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see --help)\n");
	exit(EXIT_USAGE);
}

static double parse_seconds(const char *arg, double max)
{
	char *end;
	double v = strtod(arg, &end);

	if (*end || end == arg || !(v > 0) || v > max)
		die_usage("invalid number of seconds: %s", arg);
	return v;
}

static unsigned parse_uint(const char *arg, unsigned long min, unsigned long max, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || *end || end == arg || v < min || v > max || arg[0] == '-')
		die_usage(what, arg);
	return (unsigned)v;
}

static error_t parse_arg(int key, char *arg, struct argp_state *st)
{
	struct options *o = &H.opt;
	char **nenv;

	switch (key) {
	case 'm':
		/* Lambda's range is 128..10240; smaller is allowed for experiments. */
		o->memory_mb = parse_uint(arg, 1, 10240, "invalid memory size (MB, 1..10240): %s");
		break;
	case 't':
		o->timeout_s = parse_seconds(arg, 900);
		break;
	case OPT_INIT_TIMEOUT:
		o->init_timeout_s = parse_seconds(arg, 900);
		break;
	case OPT_RUNTIME_PORT:
		o->runtime_port = parse_uint(arg, 0, 65535, "invalid port: %s");
		break;
	case OPT_INVOKE_PORT:
		o->invoke_port = parse_uint(arg, 0, 65535, "invalid port: %s");
		break;
	case OPT_HANDLER:
		o->handler = arg;
		break;
	case 'n':
		if (!*arg || strchr(arg, '/') || strlen(arg) > 140)
			die_usage("invalid function name: %s", arg);
		o->function_name = arg;
		break;
	case OPT_REGION:
		o->region = arg;
		break;
	case OPT_TASK_ROOT:
		o->task_root = arg;
		break;
	case 'e':
		if (!strchr(arg, '=') || arg[0] == '=')
			die_usage("-e wants NAME=VALUE, got: %s", arg);
		nenv = realloc(o->env, sizeof(*o->env) * (size_t)(o->nenv + 1));
		if (!nenv)
			die_usage("%s", "out of memory");
		o->env = nenv;
		o->env[o->nenv++] = arg;
		break;
	case 'E':
		o->events_path = arg;
		break;
	case OPT_READY:
		o->ready_file = arg;
		break;
	case OPT_PIDFILE:
		o->pid_file = arg;
		break;
	case OPT_CGROUP_PARENT:
		o->cgroup_parent = arg;
		break;
	case OPT_NO_CGROUP:
		o->no_cgroup = true;
		break;
	case 'q':
		o->quiet = true;
		break;
	case 'v':
		o->verbose = true;
		break;
	case ARGP_KEY_ARG:
		/* Everything after "--" (or the first non-option) is the runtime command. */
		o->cmd = &st->argv[st->next - 1];
		st->next = st->argc;
		break;
	case ARGP_KEY_END:
		if (!o->cmd)
			die_usage("%s", "no runtime command: give -- CMD [ARGS...]");
		if (o->runtime_port && o->runtime_port == o->invoke_port)
			die_usage("%s", "the runtime and invoke ports must differ");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- small utilities ---- */

double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void kick_main(void)
{
	uint64_t one = 1;

	if (write(H.kick_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		fprintf(stderr, "lambda-host: eventfd write: %s\n", strerror(errno));
}

void host_notice(const char *fmt, ...)
{
	va_list ap;

	if (H.opt.quiet)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "lambda-host: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

/* Replace PATH atomically (write a temp file, rename) so readers never see half a file. */
static int write_file_atomic(const char *path, const char *text)
{
	char tmp[PATH_MAX];
	FILE *f;
	int err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	if (fputs(text, f) < 0)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

/* ---- invocations ---- */

struct invocation *inv_new(const char *event, size_t len)
{
	struct invocation *inv = calloc(1, sizeof(*inv));

	if (!inv)
		return NULL;
	inv->event = malloc(len + 1);
	if (!inv->event) {
		free(inv);
		return NULL;
	}
	memcpy(inv->event, event, len);
	inv->event[len] = '\0';
	inv->event_len = len;
	inv->refs = 1;
	inv->init_ms = -1;
	inv->t_queued = mono_now();
	uuid_v4(inv->id);
	trace_id_new(inv->trace_id, sizeof(inv->trace_id));
	return inv;
}

void inv_put(struct invocation *inv)
{
	if (!inv || __atomic_sub_fetch(&inv->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	free(inv->event);
	free(inv->client_context);
	free(inv->body);
	free(inv);
}

int inv_enqueue(struct invocation *inv)
{
	if (H.queued >= MAX_QUEUED)
		return -EAGAIN;
	__atomic_add_fetch(&inv->refs, 1, __ATOMIC_ACQ_REL);
	inv->next = NULL;
	if (H.tail)
		H.tail->next = inv;
	else
		H.head = inv;
	H.tail = inv;
	H.queued++;
	pthread_cond_broadcast(&H.changed);
	return 0;
}

static void unlink_queued(struct invocation *inv)
{
	struct invocation **pp, *prev = NULL;

	for (pp = &H.head; *pp; prev = *pp, pp = &(*pp)->next) {
		if (*pp == inv) {
			*pp = inv->next;
			if (H.tail == inv)
				H.tail = prev;
			H.queued--;
			inv->next = NULL;
			return;
		}
	}
}

void inv_finish(struct invocation *inv, enum outcome out, const char *body, size_t len,
		const char *error_type, const char *log_lines)
{
	const char *status = NULL, *etype = error_type;
	bool never_ran = inv->t_start == 0;
	double now = mono_now();
	char report[512];

	if (inv->outcome != OUT_PENDING)
		return;
	if (never_ran)
		unlink_queued(inv);
	inv->body = malloc(len + 1);
	if (inv->body) {
		memcpy(inv->body, body ? body : "", len);
		inv->body[len] = '\0';
		inv->body_len = len;
	}
	inv->outcome = out;
	switch (out) {
	case OUT_EXIT:
	case OUT_SHUTDOWN:
		status = "error";
		etype = etype ? etype : "Runtime.ExitError";
		break;
	case OUT_OOM:
		status = "error";
		etype = "Runtime.OutOfMemory";
		break;
	case OUT_TIMEOUT:
		status = "timeout";
		break;
	case OUT_INIT_ERROR:
		status = "error";
		break;
	default:
		break;
	}
	/* An invocation that never reached a runtime while lambda-host stops leaves no log. */
	if (!(never_ran && out == OUT_SHUTDOWN)) {
		if (never_ran) {
			/* It waited on a cold start that failed: Lambda still logs it, init included. */
			printf("START RequestId: %s Version: $LATEST\n", inv->id);
			inv->t_start = inv->t_queued > H.t_spawn ? inv->t_queued : H.t_spawn;
			if (H.cold) {
				inv->init_ms = (now - H.t_spawn) * 1000.0;
				H.cold = false;
			}
		}
		if (log_lines)
			printf("%s\n", log_lines);
		printf("END RequestId: %s\n", inv->id);
		format_report(report, sizeof(report), inv->id, (now - inv->t_start) * 1000.0,
			      H.opt.memory_mb, used_mb(sandbox_max_used(&H.sb, H.runtime_pid)),
			      inv->init_ms, status, etype);
		printf("%s\n", report);
		fflush(stdout);
		H.invocations++;
		if (out != OUT_RESPONSE)
			H.errors++;
	}
	if (H.current == inv)
		H.current = NULL;
	pthread_cond_broadcast(&H.changed);
	inv_put(inv);   /* the queue's (or current's) reference */
}

/* ---- the runtime process ---- */

static char **build_env(void)
{
	extern char **environ;
	static const char *const ours[] = {
		"AWS_LAMBDA_RUNTIME_API", "_HANDLER", "LAMBDA_TASK_ROOT", "LAMBDA_RUNTIME_DIR",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_FUNCTION_NAME",
		"AWS_LAMBDA_FUNCTION_VERSION", "AWS_LAMBDA_LOG_GROUP_NAME", "AWS_LAMBDA_LOG_STREAM_NAME",
		"AWS_LAMBDA_INITIALIZATION_TYPE", "AWS_REGION", "AWS_DEFAULT_REGION", "TZ", NULL,
	};
	const struct options *o = &H.opt;
	char stream[128], **env;
	size_t n = 0, i, k = 0;
	int j;

	while (environ[n])
		n++;
	env = calloc(n + 16 + (size_t)o->nenv + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (i = 0; i < n; i++) {
		size_t nl = strcspn(environ[i], "=");
		bool drop = false;

		for (j = 0; ours[j] && !drop; j++)
			drop = strlen(ours[j]) == nl && !strncmp(environ[i], ours[j], nl);
		for (j = 0; j < o->nenv && !drop; j++)
			drop = !strncmp(environ[i], o->env[j], nl + 1);
		if (!drop && !(env[k++] = strdup(environ[i])))
			goto oom;
	}
	log_stream_name(stream, sizeof(stream));
#define ADD(...) do {						\
		if (asprintf(&env[k++], __VA_ARGS__) < 0) {		\
			env[--k] = NULL;				\
			goto oom;					\
		}							\
	} while (0)
	ADD("AWS_LAMBDA_RUNTIME_API=127.0.0.1:%u", H.runtime_port);
	ADD("_HANDLER=%s", o->handler);
	ADD("LAMBDA_TASK_ROOT=%s", o->task_root);
	ADD("LAMBDA_RUNTIME_DIR=%s", o->task_root);
	ADD("AWS_LAMBDA_FUNCTION_MEMORY_SIZE=%u", o->memory_mb);
	ADD("AWS_LAMBDA_FUNCTION_NAME=%s", o->function_name);
	ADD("AWS_LAMBDA_FUNCTION_VERSION=$LATEST");
	ADD("AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/%s", o->function_name);
	ADD("AWS_LAMBDA_LOG_STREAM_NAME=%s", stream);
	ADD("AWS_LAMBDA_INITIALIZATION_TYPE=on-demand");
	ADD("AWS_REGION=%s", o->region);
	ADD("AWS_DEFAULT_REGION=%s", o->region);
	ADD("TZ=:UTC");
#undef ADD
	for (j = 0; j < o->nenv; j++)
		if (!(env[k++] = strdup(o->env[j])))
			goto oom;
	return env;
oom:
	for (i = 0; i < k; i++)
		free(env[i]);
	free(env);
	return NULL;
}

static void free_env(char **env)
{
	size_t i;

	for (i = 0; env && env[i]; i++)
		free(env[i]);
	free(env);
}

/* Lock held. A new sandbox (cgroup) and a new runtime: a cold start. */
static int spawn_locked(char *why, size_t whysz)
{
	char **env = build_env(), pidtxt[32];
	pid_t pid;
	int err;

	if (!env) {
		snprintf(why, whysz, "out of memory");
		return -ENOMEM;
	}
	err = sandbox_create(&H.sb, H.opt.memory_mb);
	if (err && !H.sb.warned) {
		fprintf(stderr, "lambda-host: cannot create a memory cgroup under %s: %s; the memory "
			"limit is not enforced\n", H.sb.parent, strerror(-err));
		H.sb.warned = true;
	}
	H.generation++;
	H.t_spawn = mono_now();
	H.init_done = false;
	H.cold = true;
	H.dying = false;
	H.kill_requested = false;
	free(H.init_error);
	H.init_error = NULL;
	pid = runtime_spawn(&H.sb, &H.opt, env, why, whysz);
	free_env(env);
	if (pid < 0) {
		sandbox_destroy(&H.sb, 0);
		H.cold = false;
		return (int)pid;
	}
	H.runtime_pid = pid;
	if (H.opt.pid_file) {
		snprintf(pidtxt, sizeof(pidtxt), "%d\n", (int)pid);
		if ((err = write_file_atomic(H.opt.pid_file, pidtxt)))
			fprintf(stderr, "lambda-host: cannot write %s: %s\n", H.opt.pid_file, strerror(-err));
	}
	pthread_cond_broadcast(&H.changed);
	return 0;
}

/* Lock held. The runtime is gone: answer what it owed, log it, drop the sandbox. */
static void runtime_exited(int wstatus)
{
	struct invocation *inv = H.current;
	pid_t pid = H.runtime_pid;
	char desc[96], msg[256], body[512], logl[400];
	bool oom;
	int n;

	describe_exit(wstatus, desc, sizeof(desc));
	/* Only a SIGKILL with the cgroup's OOM counter up is an OOM kill of the runtime itself. */
	oom = WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL && sandbox_oom_kills(&H.sb) > 0;
	/* Died during init while an invocation waited for it: that invocation fails. */
	if (!inv && !H.init_done && H.head && !H.stopping)
		inv = H.head;
	if (inv) {
		if (H.init_error) {
			inv_finish(inv, OUT_INIT_ERROR, H.init_error, strlen(H.init_error),
				   H.init_error_type, NULL);
		} else {
			if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
				snprintf(msg, sizeof(msg), "RequestId: %s Error: Runtime exited without "
					 "providing a reason", inv->id);
			else
				snprintf(msg, sizeof(msg), "RequestId: %s Error: Runtime exited with error: %s",
					 inv->id, desc);
			n = json_error(body, sizeof(body), "Runtime.ExitError", "%s", msg);
			snprintf(logl, sizeof(logl), "%s\nRuntime.ExitError", msg);
			inv_finish(inv, oom ? OUT_OOM : OUT_EXIT, body, n > 0 ? (size_t)n : 0, NULL, logl);
		}
	} else if (H.init_error && !H.stopping) {
		host_notice("runtime failed to initialize (%s): %.300s; a new one starts on the next "
			    "invocation", H.init_error_type, H.init_error);
	} else if (!H.dying && !H.stopping) {
		host_notice("runtime (pid %d) exited: %s%s; a new one starts on the next invocation",
			    (int)pid, desc, oom ? " (out of memory)" : "");
	}
	H.runtime_pid = 0;
	H.generation++;
	H.dying = false;
	H.kill_requested = false;
	H.init_done = false;
	H.cold = false;
	free(H.init_error);
	H.init_error = NULL;
	sandbox_destroy(&H.sb, pid);
	pthread_cond_broadcast(&H.changed);
}

static void reap_locked(void)
{
	int st;
	pid_t pid;

	/* We are a subreaper: orphans of the runtime end up here too and are simply reaped. */
	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		if (pid == H.runtime_pid)
			runtime_exited(st);
}

static void kill_runtime_locked(void)
{
	H.dying = true;
	sandbox_kill(&H.sb, H.runtime_pid, SIGKILL);
}

/* Lock held. Deadlines, kill requests, and the lazy restart after a runtime died. */
static void tick_locked(void)
{
	struct invocation *inv = H.current;
	double now = mono_now();
	char ts[40], logl[768], body[768], why[512];
	int n;

	if (H.kill_requested && H.runtime_pid) {
		H.kill_requested = false;
		kill_runtime_locked();
	}
	if (inv && !H.dying && now >= inv->deadline) {
		iso8601_now(ts, sizeof(ts));
		snprintf(logl, sizeof(logl), "%s %s Task timed out after %.2f seconds", ts, inv->id,
			 H.opt.timeout_s);
		n = json_error(body, sizeof(body), "Sandbox.Timedout",
			       "RequestId: %s Error: Task timed out after %.2f seconds", inv->id,
			       H.opt.timeout_s);
		inv_finish(inv, OUT_TIMEOUT, body, n > 0 ? (size_t)n : 0, NULL, logl);
		/* Lambda resets the environment after a timeout: the next invocation is cold. */
		kill_runtime_locked();
	}
	inv = H.head;
	if (inv && H.runtime_pid && !H.init_done && !H.dying &&
	    now - (inv->t_queued > H.t_spawn ? inv->t_queued : H.t_spawn) >= H.opt.init_timeout_s) {
		snprintf(logl, sizeof(logl), "INIT_REPORT Init Duration: %.2f ms\tPhase: init\t"
			 "Status: timeout", (now - H.t_spawn) * 1000.0);
		n = json_error(body, sizeof(body), "Sandbox.Timedout",
			       "RequestId: %s Error: Init timed out after %.2f seconds", inv->id,
			       H.opt.init_timeout_s);
		inv_finish(inv, OUT_TIMEOUT, body, n > 0 ? (size_t)n : 0, NULL, logl);
		kill_runtime_locked();
	}
	/* Cold start on demand: a runtime that died is replaced only when work arrives. */
	while (!H.runtime_pid && H.head && !H.stopping) {
		if (!spawn_locked(why, sizeof(why)))
			break;
		inv = H.head;
		n = json_error(body, sizeof(body), "Runtime.InvalidEntrypoint", "RequestId: %s Error: %s",
			       inv->id, why);
		snprintf(logl, sizeof(logl), "RequestId: %s Error: %s\nRuntime.InvalidEntrypoint",
			 inv->id, why);
		inv_finish(inv, OUT_EXIT, body, n > 0 ? (size_t)n : 0, "Runtime.InvalidEntrypoint", logl);
	}
}

/* Lock held. How long the main loop may sleep: until the nearest deadline, at most 1 s. */
static int next_wakeup_ms(void)
{
	double now = mono_now(), until = now + 1.0;

	if (H.current && !H.dying && H.current->deadline < until)
		until = H.current->deadline;
	if (H.head && H.runtime_pid && !H.init_done && !H.dying) {
		double t0 = H.head->t_queued > H.t_spawn ? H.head->t_queued : H.t_spawn;

		if (t0 + H.opt.init_timeout_s < until)
			until = t0 + H.opt.init_timeout_s;
	}
	return until <= now ? 0 : (int)((until - now) * 1000.0) + 1;
}

/* ---- --events ---- */

/* One line of at most MAX_EVENT_BYTES; longer ones are consumed and flagged. -1 at EOF. */
static long read_line(FILE *f, char *buf, bool *too_long)
{
	size_t n = 0;
	int c;

	*too_long = false;
	while ((c = getc_unlocked(f)) != EOF && c != '\n') {
		if (n < MAX_EVENT_BYTES)
			buf[n++] = (char)c;
		else
			*too_long = true;
	}
	if (c == EOF && n == 0 && !*too_long)
		return -1;
	while (n && (buf[n - 1] == '\r' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		n--;
	buf[n] = '\0';
	return (long)n;
}

static void *events_main(void *arg)
{
	FILE *f = arg;
	char *buf = malloc(MAX_EVENT_BYTES + 1);
	unsigned lineno = 0;
	bool too_long;
	long n;

	if (!buf)
		fprintf(stderr, "lambda-host: --events: out of memory\n");
	while (buf && (n = read_line(f, buf, &too_long)) >= 0) {
		struct invocation *inv;
		int err;

		lineno++;
		if (too_long) {
			fprintf(stderr, "lambda-host: %s:%u: event larger than %u bytes, skipped\n",
				H.opt.events_path, lineno, MAX_EVENT_BYTES);
			continue;
		}
		if (strspn(buf, " \t") == (size_t)n)
			continue;
		inv = inv_new(buf, (size_t)n);
		if (!inv) {
			fprintf(stderr, "lambda-host: --events: out of memory\n");
			break;
		}
		pthread_mutex_lock(&H.lock);
		err = H.stopping ? -ESHUTDOWN : inv_enqueue(inv);
		if (!err) {
			kick_main();
			/* On SIGINT the answer still comes: shutdown_runtime() finishes everything. */
			while (inv->outcome == OUT_PENDING && !H.flushed)
				pthread_cond_wait(&H.changed, &H.lock);
			if (inv->outcome != OUT_PENDING && inv->outcome != OUT_SHUTDOWN) {
				fwrite(inv->body, 1, inv->body_len, stdout);
				if (!inv->body_len || inv->body[inv->body_len - 1] != '\n')
					putchar('\n');
				fflush(stdout);
			}
		}
		pthread_mutex_unlock(&H.lock);
		inv_put(inv);
		if (err)
			break;
	}
	free(buf);
	if (f != stdin)
		fclose(f);
	pthread_mutex_lock(&H.lock);
	events_done = true;
	pthread_mutex_unlock(&H.lock);
	kick_main();
	return NULL;
}

/* ---- main ---- */

static void shutdown_runtime(void)
{
	struct timespec slice = { 0, 10 * 1000 * 1000 };
	pid_t pid;
	int st = 0, i;

	pthread_mutex_lock(&H.lock);
	H.stopping = true;
	pthread_cond_broadcast(&H.changed);
	pid = H.runtime_pid;
	if (pid) {
		H.dying = true;
		/* Like Lambda's shutdown: SIGTERM, a short grace period, then SIGKILL. */
		sandbox_kill(&H.sb, pid, SIGTERM);
	}
	pthread_mutex_unlock(&H.lock);
	for (i = 0; pid && i < 50; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			break;
		nanosleep(&slice, NULL);
	}
	pthread_mutex_lock(&H.lock);
	if (pid && i == 50) {
		sandbox_kill(&H.sb, pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	if (pid)
		runtime_exited(st);
	while (H.head) {
		char body[128];
		int n = json_error(body, sizeof(body), "ServiceException", "lambda-host is shutting down");

		inv_finish(H.head, OUT_SHUTDOWN, body, n > 0 ? (size_t)n : 0, NULL, NULL);
	}
	H.flushed = true;
	pthread_cond_broadcast(&H.changed);
	pthread_mutex_unlock(&H.lock);
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc,
					  .args_doc = "-- CMD [ARGS...]" };
	char cwd[PATH_MAX], why[512], text[PATH_MAX + 256];
	struct pollfd pfd[2];
	pthread_t events_tid;
	bool events_started = false, servers_up = false;
	FILE *events = NULL;
	sigset_t mask;
	int sigfd = -1, code = EXIT_FAIL, err;

	argp_parse(&argp, argc, argv, ARGP_IN_ORDER, NULL, NULL);
	if (!H.opt.region)
		H.opt.region = getenv("AWS_REGION") && *getenv("AWS_REGION") ? getenv("AWS_REGION")
									      : "us-east-1";
	if (!H.opt.task_root) {
		if (!getcwd(cwd, sizeof(cwd))) {
			fprintf(stderr, "lambda-host: getcwd: %s\n", strerror(errno));
			return EXIT_FAIL;
		}
		H.opt.task_root = cwd;
	}
	if (H.opt.events_path) {
		events = strcmp(H.opt.events_path, "-") ? fopen(H.opt.events_path, "re") : stdin;
		if (!events) {
			fprintf(stderr, "lambda-host: cannot open %s: %s\n", H.opt.events_path,
				strerror(errno));
			return EXIT_FAIL;
		}
	}

	/* Signals arrive through a signalfd in the main loop; blocked before any thread starts. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	H.kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (sigfd < 0 || H.kick_fd < 0) {
		fprintf(stderr, "lambda-host: signalfd/eventfd: %s\n", strerror(errno));
		goto cleanup;
	}
	/* Grandchildren the runtime orphans are reparented to us, so we can reap and kill them. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	err = sandbox_setup(&H.sb, &H.opt);
	if (err && H.opt.cgroup_parent) {
		fprintf(stderr, "lambda-host: --cgroup-parent %s: not a usable memory cgroup: %s\n",
			H.opt.cgroup_parent, strerror(-err));
		goto cleanup;
	}
	if (H.sb.mode == CG_NONE && !H.opt.no_cgroup)
		fprintf(stderr, "lambda-host: no usable memory cgroup (%s): the memory limit is not "
			"enforced and Max Memory Used is the runtime's VmHWM\n",
			err == -EPERM ? "not root" : "no writable v1 or v2 memory controller");
	sandbox_cleanup_stale(&H.sb);

	if (servers_start())
		goto cleanup;
	servers_up = true;

	pthread_mutex_lock(&H.lock);
	err = spawn_locked(why, sizeof(why));
	pthread_mutex_unlock(&H.lock);
	if (err) {
		fprintf(stderr, "lambda-host: %s\n", why);
		goto cleanup;
	}
	host_notice("Runtime API on 127.0.0.1:%u, invoke on "
		    "http://127.0.0.1:%u/2015-03-31/functions/function/invocations; runtime pid %d, "
		    "%u MB, cgroup %s", H.runtime_port, H.invoke_port, (int)H.runtime_pid,
		    H.opt.memory_mb, H.sb.path[0] ? H.sb.path : "none");
	if (H.opt.ready_file) {
		snprintf(text, sizeof(text), "pid=%d\nruntime_api=127.0.0.1:%u\ninvoke=127.0.0.1:%u\n"
			 "runtime_pid=%d\ncgroup=%s\n", (int)getpid(), H.runtime_port, H.invoke_port,
			 (int)H.runtime_pid, H.sb.path[0] ? H.sb.path : "none");
		if ((err = write_file_atomic(H.opt.ready_file, text))) {
			fprintf(stderr, "lambda-host: cannot write %s: %s\n", H.opt.ready_file,
				strerror(-err));
			goto cleanup;
		}
	}
	if (events) {
		if (pthread_create(&events_tid, NULL, events_main, events)) {
			fprintf(stderr, "lambda-host: cannot start the --events thread\n");
			goto cleanup;
		}
		events_started = true;
		events = NULL;          /* the thread owns it now */
	}

	pfd[0] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = H.kick_fd, .events = POLLIN };
	for (;;) {
		struct signalfd_siginfo si;
		bool reap = false, stop = false;
		uint64_t v;
		int tmo;

		pthread_mutex_lock(&H.lock);
		tmo = next_wakeup_ms();
		pthread_mutex_unlock(&H.lock);
		if (poll(pfd, 2, tmo) < 0 && errno != EINTR) {
			fprintf(stderr, "lambda-host: poll: %s\n", strerror(errno));
			goto cleanup;
		}
		while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGCHLD) {
				reap = true;
			} else {
				/* Say who asked: a stray kill of a reused pid is otherwise a mystery. */
				host_notice("%s from pid %u: stopping", strsignal((int)si.ssi_signo),
					    si.ssi_pid);
				stop = true;
			}
		}
		while (read(H.kick_fd, &v, sizeof(v)) == (ssize_t)sizeof(v))
			;
		pthread_mutex_lock(&H.lock);
		if (reap)
			reap_locked();
		stop = stop || events_done;
		if (!stop)
			tick_locked();
		pthread_mutex_unlock(&H.lock);
		if (stop)
			break;
	}
	code = EXIT_OK;

cleanup:
	shutdown_runtime();
	if (servers_up)
		servers_stop();
	if (events_started)
		pthread_join(events_tid, NULL);
	if (events && events != stdin)
		fclose(events);
	pthread_mutex_lock(&H.lock);
	sandbox_destroy(&H.sb, 0);
	if (H.opt.events_path && code == EXIT_OK)
		host_notice("%u invocations, %u errors", H.invocations, H.errors);
	pthread_mutex_unlock(&H.lock);
	if (H.opt.ready_file && servers_up)
		unlink(H.opt.ready_file);
	if (H.opt.pid_file)
		unlink(H.opt.pid_file);
	if (sigfd >= 0)
		close(sigfd);
	free(H.opt.env);
	return code;
}
