/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * runtime.h — the smallest Lambda runtime loop for the bundled C sample functions, plus the
 * HTTP/1.1 client it is built on (also used by tools/lambda-host/invoke).
 *
 * The client talks to AWS_LAMBDA_RUNTIME_API over ONE keep-alive TCP socket, as real runtimes do
 * (docs/design.md, "Invocations"): GET /next is sent with send() (the sendto syscall) and POST /response with
 * writev() whose iov[0] holds the request line and headers, so peaktrace's Runtime API detector
 * sees both syscall shapes. Replies are read with recv() (recvfrom).
 *
 * Allocations made here, so the sample functions' figures stay exact: one receive buffer and one
 * body buffer per connection, grown with realloc to the largest message seen and then reused
 * (after the first invocation no further allocation happens here for events of the same size);
 * the response buffer handed to the handler is likewise reused across invocations.
 */
#ifndef LAMBDA_RUNTIME_H
#define LAMBDA_RUNTIME_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Client-side cap on any message body: Lambda's 6 MiB payload limit plus room for error JSON. */
#define RT_MAX_BODY (8u << 20)
/* Cap on a response's status line + headers. */
#define RT_MAX_HEAD (64u << 10)

struct rt_buf {
	char *data;      /* always NUL-terminated when non-NULL */
	size_t len;
	size_t cap;
};

int rt_buf_reserve(struct rt_buf *b, size_t extra);
int rt_buf_append(struct rt_buf *b, const void *p, size_t n);
int rt_buf_printf(struct rt_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append s as a JSON string literal (with quotes), escaping what JSON requires. */
int rt_buf_json_str(struct rt_buf *b, const char *s);
void rt_buf_reset(struct rt_buf *b);
void rt_buf_free(struct rt_buf *b);

struct http_conn {
	int fd;                  /* -1 when not connected */
	char host[64];           /* numeric IPv4 or a name resolvable by getaddrinfo */
	char port[8];
	double timeout_s;        /* per send/recv call; 0 = block forever (GET /next must) */
	struct rt_buf in;        /* bytes received but not consumed yet */
};

struct http_resp {
	int status;
	struct rt_buf head;      /* status line + headers, NUL-terminated */
	struct rt_buf body;      /* de-chunked body */
	bool close;              /* server said Connection: close */
};

/* hostport is "HOST:PORT". Connects lazily on the first request. Returns 0 or -errno. */
int http_init(struct http_conn *c, const char *hostport, double timeout_s);
/*
 * One request/response exchange on the keep-alive connection; reconnects once if the server had
 * closed an idle connection. extra_headers is "" or CRLF-terminated header lines. Returns 0 (any
 * HTTP status) or -errno with a reason in *why (static string).
 */
int http_request(struct http_conn *c, const char *method, const char *path,
		 const char *extra_headers, const void *body, size_t len,
		 struct http_resp *r, const char **why);
/* Case-insensitive header lookup; copies the value (trimmed) into out. Returns its length or -1. */
int http_header(const struct http_resp *r, const char *name, char *out, size_t outsz);
void http_close(struct http_conn *c);
void http_resp_free(struct http_resp *r);

/* What a handler receives for one invocation. All strings NUL-terminated. */
struct rt_event {
	const char *request_id;
	long long deadline_ms;   /* Lambda-Runtime-Deadline-Ms, epoch milliseconds */
	const char *function_arn;
	const char *trace_id;
	const char *body;
	size_t len;
};

enum { RT_OK = 0, RT_ERROR = 1 };

/*
 * A handler writes its response body into out (reset before each call) and returns RT_OK, or
 * writes an error JSON object (see rt_error_json) and returns RT_ERROR.
 */
typedef int (*rt_handler_fn)(const struct rt_event *ev, struct rt_buf *out, void *arg);

/*
 * The runtime loop: GET next -> handler -> POST response|error, forever. Returns only on a fatal
 * error (no AWS_LAMBDA_RUNTIME_API, connection refused...), after printing one line on stderr.
 */
int rt_run(const char *name, rt_handler_fn fn, void *arg);
/* Report a failed initialization (POST /runtime/init/error) and exit(1). */
void rt_init_error(const char *type, const char *msg) __attribute__((noreturn));
/* Fill out with {"errorMessage":..., "errorType":...}. */
int rt_error_json(struct rt_buf *out, const char *type, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Read an integer member "key" at any depth of a JSON text: finds "key" followed by ':' and a
 * number. Not a JSON parser — enough for the sample events ({"mb": 64}); malformed input gives
 * dflt.
 */
long long rt_json_int(const char *json, size_t len, const char *key, long long dflt);
/* Same for true/false. */
bool rt_json_bool(const char *json, size_t len, const char *key, bool dflt);

#endif /* LAMBDA_RUNTIME_H */
