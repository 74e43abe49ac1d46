/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * host.h — lambda-host's shared state: the options, one invocation, the sandbox, the host.
 *
 * Threads: libmicrohttpd runs one thread per connection (runtime API and invoke endpoint); the
 * main thread owns the runtime process (spawn, reap, kill, cgroup) and the deadlines; an optional
 * events thread replays --events. Everything below `lock` in struct host is guarded by it, and
 * every state change is announced with a broadcast on `changed` (few waiters, so one condvar for
 * all predicates is simpler than one per object and costs nothing). HTTP threads never touch the
 * process: they set a flag and kick the main loop through `kick_fd`.
 */
#ifndef LAMBDA_HOST_H
#define LAMBDA_HOST_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Lambda's limits, as its own error messages state them. */
#define MAX_EVENT_BYTES    6291456u   /* sync invoke payload: "(limit 6291456 bytes)" = 6 MiB */
#define MAX_RESPONSE_BYTES 6291556u   /* "maximum allowed payload size (6291556 bytes)" */
#define MAX_QUEUED         1024u      /* invocations waiting for the runtime */
#define MAX_HTTP_CONNS     128u       /* per listener: one thread each */
#define INIT_TIMEOUT_S     10.0       /* Lambda's on-demand init limit */
#define REQ_ID_LEN         36         /* UUID text */

struct options {
	unsigned memory_mb;          /* --memory: sandbox limit, AWS_LAMBDA_FUNCTION_MEMORY_SIZE (128) */
	unsigned runtime_port;       /* --runtime-port: Runtime API (9101; 0 = any free port) */
	unsigned invoke_port;        /* --invoke-port: RIE-style invoke endpoint (8180; 0 = any) */
	const char *handler;         /* --handler: _HANDLER ("function.handler") */
	const char *function_name;   /* --function-name: AWS_LAMBDA_FUNCTION_NAME ("function") */
	const char *region;          /* --region: AWS_REGION (us-east-1, or $AWS_REGION) */
	const char *task_root;       /* --task-root: LAMBDA_TASK_ROOT and cwd (current dir) */
	double timeout_s;            /* --timeout: per invocation (3 s, like Lambda's default) */
	double init_timeout_s;       /* --init-timeout: runtime start to first /next (10 s) */
	const char *events_path;     /* --events: JSON Lines to invoke in sequence, then exit */
	const char *ready_file;      /* --ready-file: written once both listeners are up */
	const char *pid_file;        /* --pid-file: runtime pid, rewritten on each (re)start */
	const char *cgroup_parent;   /* --cgroup-parent: where the sandbox cgroup goes */
	bool no_cgroup;              /* --no-cgroup: no limit, Max Memory Used from VmHWM */
	bool quiet;                  /* -q: no host notices, only Lambda's log lines */
	bool verbose;                /* -v: libmicrohttpd's own messages too */
	char **env;                  /* -e NAME=VALUE, extra function environment */
	int nenv;
	char **cmd;                  /* -- CMD ARGS: the runtime */
};

/* How an invocation ended, for its REPORT and for the invoker's answer. */
enum outcome {
	OUT_PENDING = 0,
	OUT_RESPONSE,      /* POST /response: 200 with the body */
	OUT_FUNC_ERROR,    /* POST /error: 200 + X-Amz-Function-Error: Unhandled */
	OUT_TOO_LARGE,     /* response over 6291556 bytes: Function.ResponseSizeTooLarge */
	OUT_EXIT,          /* runtime exited or was killed: Runtime.ExitError */
	OUT_OOM,           /* ... by the cgroup OOM killer: REPORT says Runtime.OutOfMemory */
	OUT_TIMEOUT,       /* --timeout: Task timed out after X seconds */
	OUT_INIT_ERROR,    /* runtime posted /init/error on this invocation's cold start */
	OUT_SHUTDOWN,      /* lambda-host is stopping */
};

struct invocation {
	struct invocation *next;     /* queue link */
	int refs;                    /* queue/current + each waiter */
	char id[REQ_ID_LEN + 1];
	char trace_id[96];
	char *event;                 /* NUL-terminated copy of the payload */
	size_t event_len;
	char *client_context;        /* X-Amz-Client-Context, passed through, or NULL */
	double t_queued;             /* CLOCK_MONOTONIC seconds */
	double t_start;              /* handed to the runtime by /next (0 = never) */
	double deadline;             /* t_start + timeout */
	double init_ms;              /* Init Duration to report, < 0 if warm */
	/* result, valid once outcome != OUT_PENDING */
	enum outcome outcome;
	char *body;                  /* answer body for the invoker */
	size_t body_len;
};

/* The runtime's sandbox: its cgroup (or none) and how memory is measured there. */
enum cg_mode { CG_NONE = 0, CG_V1, CG_V2 };

struct sandbox {
	enum cg_mode mode;
	char parent[PATH_MAX];       /* directory the sandbox cgroups are created in */
	char path[PATH_MAX];         /* this sandbox's cgroup, "" if none */
	unsigned seq;                /* sandboxes created so far (name suffix) */
	bool peak_file;              /* v2 memory.peak / v1 max_usage_in_bytes readable */
	uint64_t max_used;           /* high-water mark of this sandbox, bytes; never decreases */
	bool warned;                 /* "not enforced" warning printed once */
};

struct host {
	struct options opt;
	int kick_fd;                 /* eventfd: wake the main loop */

	pthread_mutex_t lock;
	pthread_cond_t changed;
	/* --- guarded by lock --- */
	struct invocation *head, *tail;
	unsigned queued;
	struct invocation *current;  /* handed out by /next, not finished */
	pid_t runtime_pid;           /* 0 when no runtime is running */
	unsigned generation;         /* bumped at each spawn and each death */
	double t_spawn;              /* CLOCK_MONOTONIC */
	bool init_done;              /* this generation called /next */
	double init_ms;              /* its Init Duration */
	bool cold;                   /* next invocation handed out reports Init Duration */
	bool kill_requested;         /* HTTP thread asks the main loop to kill the runtime */
	bool dying;                  /* runtime being killed: hand out nothing, expect its exit */
	char *init_error;            /* body posted to /init/error (this generation) */
	char init_error_type[128];
	bool stopping;
	bool flushed;                /* stopping, and every invocation has its outcome */
	unsigned invocations, errors;
	struct sandbox sb;
	unsigned short runtime_port, invoke_port;   /* actually bound */
};

extern struct host H;

/* main.c */
void kick_main(void);
void inv_put(struct invocation *inv);
struct invocation *inv_new(const char *event, size_t len);
int inv_enqueue(struct invocation *inv);               /* lock held; -EAGAIN when full */
/* lock held: record the result, print END and REPORT (and START first if it never ran) */
void inv_finish(struct invocation *inv, enum outcome out, const char *body, size_t len,
		const char *error_type, const char *log_lines);
void host_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double mono_now(void);

/* server.c */
int servers_start(void);
void servers_stop(void);

/* sandbox.c */
int sandbox_setup(struct sandbox *sb, const struct options *o);
int sandbox_create(struct sandbox *sb, unsigned memory_mb);
void sandbox_kill(struct sandbox *sb, pid_t pgid, int sig);
void sandbox_destroy(struct sandbox *sb, pid_t pgid);
uint64_t sandbox_max_used(struct sandbox *sb, pid_t pgid);
uint64_t sandbox_oom_kills(const struct sandbox *sb);
pid_t runtime_spawn(struct sandbox *sb, const struct options *o, char *const envp[],
		    char *why, size_t whysz);
void sandbox_cleanup_stale(const struct sandbox *sb);

/* logfmt.c: pure formatting, no shared state */
void uuid_v4(char out[REQ_ID_LEN + 1]);
void trace_id_new(char *out, size_t outsz);
void log_stream_name(char *out, size_t outsz);
unsigned long billed_ms(double duration_ms);
unsigned long used_mb(uint64_t bytes);
int format_report(char *out, size_t outsz, const char *id, double duration_ms, unsigned memory_mb,
		  unsigned long max_used_mb, double init_ms, const char *status,
		  const char *error_type);
int json_error(char *out, size_t outsz, const char *type, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void iso8601_now(char *out, size_t outsz);
void describe_exit(int wstatus, char *out, size_t outsz);
bool valid_request_id(const char *s, size_t len);

#endif /* LAMBDA_HOST_H */
