// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * server.c — the Runtime API (127.0.0.1:9101 by default) and the RIE-style invoke endpoint (8180)
 * on libmicrohttpd, one thread per connection.
 *
 * Thread-per-connection is what makes GET /next simple: its handler just waits on the host's
 * condvar until an event is queued, and the invoke handler waits the same way for the result.
 * MHD does the HTTP (keep-alive, chunked request bodies, trailers); we only route and bound.
 *
 * MHD calls a handler three ways per request: once with the headers (*con_cls == NULL), once per
 * piece of body, and once more when the request is complete. Decisions that only need headers
 * (route, id, Content-Length) are taken on the first call but answered on the last, after the
 * body has been read and dropped, so the runtime's keep-alive connection survives an error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>
#include "host.h"

#define RUNTIME_PREFIX "/2018-06-01/runtime"
#define INVOKE_PREFIX "/2015-03-31/functions/"
#define MAX_CLIENT_CONTEXT 3583        /* Lambda's limit on X-Amz-Client-Context (base64) */
#define WAIT_SLICE_MS 250              /* how often a blocked handler re-checks its peer */
#define HTTP_CONTENT_TOO_LARGE 413     /* MHD renamed its constant between releases */

enum route { R_BAD = 0, R_NEXT, R_RESPONSE, R_ERROR, R_INIT_ERROR, R_INVOKE };

/* Per-request state, from the first handler call to MHD's completion callback. */
struct req {
	enum route route;
	unsigned gen;                /* runtime generation when the request arrived */
	char id[REQ_ID_LEN + 1];
	char *buf;                   /* body so far (NUL-terminated), bounded by limit */
	size_t len, cap, limit;
	bool too_large;
	int early_status;            /* error decided from the headers, answered at the end */
	char early_body[512];
};

static struct MHD_Daemon *rapi_d, *invoke_d;
/* Invoke requests between their first handler call and the end of sending their answer. */
static unsigned inflight_invokes;

/* ---- small helpers ---- */

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	if (!H.opt.verbose)
		return;
	fprintf(stderr, "lambda-host: http: ");
	vfprintf(stderr, fmt, ap);
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *body,
			     size_t len, const char *const *hdrs)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)(body ? body : ""),
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	for (; hdrs && hdrs[0]; hdrs += 2)
		if (hdrs[1])
			MHD_add_response_header(r, hdrs[0], hdrs[1]);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_error(struct MHD_Connection *conn, unsigned status, const char *type,
				   const char *msg)
{
	char body[768];
	int n = json_error(body, sizeof(body), type, "%s", msg);

	return reply(conn, status, body, n > 0 ? (size_t)n : 0, NULL);
}

/* Error types from headers end up in JSON and in REPORT: accept only a plain token. */
static const char *token_or(const char *s, const char *dflt)
{
	static const char ok[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-";
	size_t n = s ? strlen(s) : 0;

	return n && n < 100 && strspn(s, ok) == n ? s : dflt;
}

static void set_early(struct req *rq, int status, const char *type, const char *msg)
{
	int n = json_error(rq->early_body, sizeof(rq->early_body), type, "%s", msg);

	if (n < 0)
		rq->early_body[0] = '\0';
	rq->early_status = status;
}

/* Keep at most rq->limit bytes; past that remember the overflow and drop the rest. */
static void body_append(struct req *rq, const char *data, size_t n)
{
	if (rq->too_large || rq->early_status)
		return;
	if (rq->len + n > rq->limit) {
		rq->too_large = true;
		free(rq->buf);
		rq->buf = NULL;
		rq->len = rq->cap = 0;
		return;
	}
	if (rq->len + n + 1 > rq->cap) {
		size_t cap = rq->cap ? rq->cap : 4096;
		char *p;

		while (cap < rq->len + n + 1)
			cap *= 2;
		if (cap > rq->limit + 1)
			cap = rq->limit + 1;
		p = realloc(rq->buf, cap);
		if (!p) {
			set_early(rq, 500, "InternalServerError", "out of memory");
			return;
		}
		rq->buf = p;
		rq->cap = cap;
	}
	memcpy(rq->buf + rq->len, data, n);
	rq->len += n;
	rq->buf[rq->len] = '\0';
}

static bool content_length_over(struct MHD_Connection *conn, size_t limit)
{
	const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");

	return cl && strtoull(cl, NULL, 10) > limit;
}

/* Has the peer closed its end? A runtime that died while blocked in /next must not get an event. */
static bool peer_gone(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct pollfd p;

	if (!ci)
		return false;
	p = (struct pollfd){ .fd = ci->connect_fd, .events = POLLRDHUP };
	return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

static void wait_slice(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += WAIT_SLICE_MS * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&H.changed, &H.lock, &ts);
}

static long long epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Minimal base64 decoder for the streaming error trailer; stops at the first invalid byte. */
static size_t b64_decode(const char *in, char *out, size_t outsz)
{
	unsigned acc = 0;
	int bits = 0;
	size_t o = 0;

	for (; *in && *in != '=' && o + 1 < outsz; in++) {
		const char *tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
		const char *p = strchr(tbl, *in);

		if (!p)
			break;
		acc = (acc << 6) | (unsigned)(p - tbl);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	out[o] = '\0';
	return o;
}

static void req_done(void *cls, struct MHD_Connection *conn, void **con_cls,
		     enum MHD_RequestTerminationCode toe)
{
	struct req *rq = *con_cls;

	if (rq) {
		if (rq->route == R_INVOKE)
			__atomic_sub_fetch(&inflight_invokes, 1, __ATOMIC_ACQ_REL);
		free(rq->buf);
		free(rq);
		*con_cls = NULL;
	}
}

/* ---- Runtime API ---- */

/* "/2018-06-01/runtime/invocation/{id}/{response|error}", "/invocation/next", "/init/error" */
static void route_runtime(struct req *rq, struct MHD_Connection *conn, const char *url,
			  const char *method)
{
	const char *inv = RUNTIME_PREFIX "/invocation/";
	bool get = !strcmp(method, "GET"), post = !strcmp(method, "POST");

	rq->limit = MAX_RESPONSE_BYTES;
	if (!strcmp(url, RUNTIME_PREFIX "/invocation/next")) {
		rq->route = R_NEXT;
		if (!get)
			set_early(rq, 405, "MethodNotAllowed", "use GET for /invocation/next");
	} else if (!strcmp(url, RUNTIME_PREFIX "/init/error")) {
		rq->route = R_INIT_ERROR;
		if (!post)
			set_early(rq, 405, "MethodNotAllowed", "use POST for /init/error");
	} else if (!strncmp(url, inv, strlen(inv))) {
		const char *id = url + strlen(inv), *slash = strchr(id, '/');
		size_t idlen = slash ? (size_t)(slash - id) : 0;

		if (slash && !strcmp(slash, "/response"))
			rq->route = R_RESPONSE;
		else if (slash && !strcmp(slash, "/error"))
			rq->route = R_ERROR;
		if (!rq->route) {
			set_early(rq, 404, "NotFound", "unknown Runtime API path");
		} else if (!post) {
			set_early(rq, 405, "MethodNotAllowed", "use POST");
		} else if (!valid_request_id(id, idlen) || idlen > REQ_ID_LEN) {
			set_early(rq, 400, "InvalidRequestID", "Invalid request ID");
		} else {
			memcpy(rq->id, id, idlen);
			rq->id[idlen] = '\0';
		}
	} else {
		set_early(rq, 404, "NotFound", "unknown Runtime API path");
	}
	if (!rq->early_status && rq->route != R_NEXT && content_length_over(conn, rq->limit))
		rq->too_large = true;
}

static enum MHD_Result runtime_next(struct MHD_Connection *conn, struct req *rq)
{
	struct invocation *inv;
	char deadline[32], arn[256];
	struct MHD_Response *r;
	enum MHD_Result ret;

	pthread_mutex_lock(&H.lock);
	for (;;) {
		/* The runtime that asked is gone (killed, restarted) or we are stopping: hang up. */
		if (H.stopping || rq->gen != H.generation) {
			pthread_mutex_unlock(&H.lock);
			return MHD_NO;
		}
		if (H.runtime_pid && !H.dying && !H.current && H.head)
			break;
		wait_slice();
		if (peer_gone(conn)) {
			pthread_mutex_unlock(&H.lock);
			return MHD_NO;
		}
	}
	if (peer_gone(conn)) {
		pthread_mutex_unlock(&H.lock);
		return MHD_NO;
	}
	inv = H.head;
	H.head = inv->next;
	if (!H.head)
		H.tail = NULL;
	H.queued--;
	inv->next = NULL;
	H.current = inv;
	inv->t_start = mono_now();
	inv->deadline = inv->t_start + H.opt.timeout_s;
	inv->init_ms = H.cold ? H.init_ms : -1;
	H.cold = false;
	printf("START RequestId: %s Version: $LATEST\n", inv->id);
	fflush(stdout);

	snprintf(deadline, sizeof(deadline), "%lld", epoch_ms() + (long long)(H.opt.timeout_s * 1000));
	snprintf(arn, sizeof(arn), "arn:aws:lambda:%s:012345678912:function:%s", H.opt.region,
		 H.opt.function_name);
	r = MHD_create_response_from_buffer(inv->event_len, inv->event, MHD_RESPMEM_MUST_COPY);
	if (r) {
		MHD_add_response_header(r, "Content-Type", "application/json");
		MHD_add_response_header(r, "Lambda-Runtime-Aws-Request-Id", inv->id);
		MHD_add_response_header(r, "Lambda-Runtime-Deadline-Ms", deadline);
		MHD_add_response_header(r, "Lambda-Runtime-Invoked-Function-Arn", arn);
		MHD_add_response_header(r, "Lambda-Runtime-Trace-Id", inv->trace_id);
		if (inv->client_context)
			MHD_add_response_header(r, "Lambda-Runtime-Client-Context", inv->client_context);
	}
	pthread_mutex_unlock(&H.lock);
	/* If this fails the invocation is still running: its timeout will end it, as on Lambda. */
	if (!r)
		return MHD_NO;
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result runtime_result(struct MHD_Connection *conn, struct req *rq)
{
	static const char accepted[] = "{\"status\":\"OK\"}";
	struct invocation *inv;
	const char *etype = NULL, *ebody;
	char *synth = NULL;
	enum outcome out;

	pthread_mutex_lock(&H.lock);
	inv = H.current;
	if (!inv || H.dying || strcmp(inv->id, rq->id)) {
		pthread_mutex_unlock(&H.lock);
		return reply_error(conn, MHD_HTTP_BAD_REQUEST, "InvalidRequestID", "Invalid request ID");
	}
	if (rq->too_large) {
		char body[256];
		int n = json_error(body, sizeof(body), "Function.ResponseSizeTooLarge",
				   "Response payload size exceeded maximum allowed payload size (%u bytes).",
				   MAX_RESPONSE_BYTES);

		inv_finish(inv, OUT_TOO_LARGE, body, n > 0 ? (size_t)n : 0, NULL, NULL);
		pthread_mutex_unlock(&H.lock);
		n = json_error(body, sizeof(body), "RequestEntityTooLarge",
			       "Exceeded maximum allowed payload size (%u bytes).", MAX_RESPONSE_BYTES);
		return reply(conn, HTTP_CONTENT_TOO_LARGE, body, n > 0 ? (size_t)n : 0, NULL);
	}
	if (rq->route == R_ERROR) {
		out = OUT_FUNC_ERROR;
		etype = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						    "Lambda-Runtime-Function-Error-Type");
	} else {
		/* A streamed response that failed midway says so in trailers, not in the status. */
		etype = MHD_lookup_connection_value(conn, MHD_FOOTER_KIND,
						    "Lambda-Runtime-Function-Error-Type");
		out = etype ? OUT_FUNC_ERROR : OUT_RESPONSE;
		ebody = MHD_lookup_connection_value(conn, MHD_FOOTER_KIND,
						    "Lambda-Runtime-Function-Error-Body");
		if (etype && ebody && (synth = malloc(strlen(ebody) + 1)))
			b64_decode(ebody, synth, strlen(ebody) + 1);
	}
	if (out == OUT_FUNC_ERROR && !synth && !rq->len) {
		/* An empty error body still owes the invoker Lambda's error shape. */
		synth = malloc(512);
		if (synth && json_error(synth, 512, token_or(etype, "Unhandled"), "%s", "") < 0)
			synth[0] = '\0';
	}
	if (synth)
		inv_finish(inv, out, synth, strlen(synth), NULL, NULL);
	else
		inv_finish(inv, out, rq->buf, rq->len, NULL, NULL);
	pthread_mutex_unlock(&H.lock);
	free(synth);
	return reply(conn, MHD_HTTP_ACCEPTED, accepted, sizeof(accepted) - 1, NULL);
}

static enum MHD_Result runtime_init_error(struct MHD_Connection *conn, struct req *rq)
{
	static const char accepted[] = "{\"status\":\"OK\"}";
	const char *etype = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
							"Lambda-Runtime-Function-Error-Type");
	char *body;

	pthread_mutex_lock(&H.lock);
	if (rq->gen != H.generation || H.init_done || !H.runtime_pid) {
		pthread_mutex_unlock(&H.lock);
		return reply_error(conn, MHD_HTTP_FORBIDDEN, "InvalidStateTransition",
				   "State transition from Ready to InitError failed for runtime");
	}
	if (rq->too_large || !rq->len) {
		body = malloc(512);
		if (body && json_error(body, 512, "Runtime.Unknown", "%s",
				       rq->too_large ? "init error body too large" : "") < 0)
			body[0] = '\0';
	} else {
		body = strdup(rq->buf);
	}
	free(H.init_error);
	H.init_error = body;
	/* The header is echoed into REPORT: keep it to a plain token. */
	snprintf(H.init_error_type, sizeof(H.init_error_type), "%s", token_or(etype, "Runtime.Unknown"));
	H.kill_requested = true;
	H.dying = true;
	pthread_mutex_unlock(&H.lock);
	kick_main();
	return reply(conn, MHD_HTTP_ACCEPTED, accepted, sizeof(accepted) - 1, NULL);
}

static enum MHD_Result runtime_handler(void *cls, struct MHD_Connection *conn, const char *url,
				       const char *method, const char *version,
				       const char *upload, size_t *upload_size, void **con_cls)
{
	struct req *rq = *con_cls;

	if (!rq) {
		if (!(rq = calloc(1, sizeof(*rq))))
			return MHD_NO;
		*con_cls = rq;
		route_runtime(rq, conn, url, method);
		pthread_mutex_lock(&H.lock);
		rq->gen = H.generation;
		/* Init ends when the runtime first asks for work: that is Lambda's Init Duration. */
		if (rq->route == R_NEXT && !rq->early_status && H.runtime_pid && !H.init_done) {
			H.init_done = true;
			H.init_ms = (mono_now() - H.t_spawn) * 1000.0;
		}
		/* Unknown id: answer 400 without buffering a body nobody will use. */
		if ((rq->route == R_RESPONSE || rq->route == R_ERROR) && !rq->early_status &&
		    (!H.current || strcmp(H.current->id, rq->id)))
			set_early(rq, 400, "InvalidRequestID", "Invalid request ID");
		pthread_mutex_unlock(&H.lock);
		return MHD_YES;
	}
	if (*upload_size) {
		body_append(rq, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (rq->early_status)
		return reply(conn, (unsigned)rq->early_status, rq->early_body, strlen(rq->early_body), NULL);
	switch (rq->route) {
	case R_NEXT:
		return runtime_next(conn, rq);
	case R_RESPONSE:
	case R_ERROR:
		return runtime_result(conn, rq);
	case R_INIT_ERROR:
		return runtime_init_error(conn, rq);
	default:
		return reply_error(conn, MHD_HTTP_NOT_FOUND, "NotFound", "unknown Runtime API path");
	}
}

/* ---- invoke endpoint ---- */

static enum MHD_Result invoke_final(struct MHD_Connection *conn, struct req *rq)
{
	const char *type = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Amz-Invocation-Type");
	const char *cc = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Amz-Client-Context");
	struct invocation *inv;
	const char *hdrs[9];
	enum MHD_Result ret;
	bool async = false;
	int err;

	if (rq->too_large) {
		char msg[128];

		snprintf(msg, sizeof(msg), "Request must be smaller than %u bytes for the InvokeFunction "
			 "operation", MAX_EVENT_BYTES);
		return reply_error(conn, HTTP_CONTENT_TOO_LARGE, "RequestTooLargeException", msg);
	}
	if (type && !strcasecmp(type, "DryRun"))
		return reply(conn, MHD_HTTP_NO_CONTENT, NULL, 0, NULL);
	if (type && !strcasecmp(type, "Event"))
		async = true;
	else if (type && strcasecmp(type, "RequestResponse"))
		return reply_error(conn, MHD_HTTP_BAD_REQUEST, "InvalidParameterValueException",
				   "X-Amz-Invocation-Type must be RequestResponse, Event or DryRun");
	if (cc && strlen(cc) > MAX_CLIENT_CONTEXT)
		return reply_error(conn, MHD_HTTP_BAD_REQUEST, "InvalidParameterValueException",
				   "Client context must be at most 3583 bytes");
	inv = inv_new(rq->buf ? rq->buf : "", rq->len);
	if (!inv || (cc && !(inv->client_context = strdup(cc)))) {
		inv_put(inv);
		return reply_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "ServiceException", "out of memory");
	}
	pthread_mutex_lock(&H.lock);
	err = H.stopping ? -ESHUTDOWN : inv_enqueue(inv);
	pthread_mutex_unlock(&H.lock);
	if (err) {
		inv_put(inv);
		return err == -ESHUTDOWN
		       ? reply_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "ServiceException",
				     "lambda-host is shutting down")
		       : reply_error(conn, MHD_HTTP_TOO_MANY_REQUESTS, "TooManyRequestsException",
				     "too many invocations queued");
	}
	kick_main();
	if (async) {
		hdrs[0] = "X-Amzn-RequestId";
		hdrs[1] = inv->id;
		hdrs[2] = NULL;
		ret = reply(conn, MHD_HTTP_ACCEPTED, NULL, 0, hdrs);
		inv_put(inv);
		return ret;
	}
	pthread_mutex_lock(&H.lock);
	/* Even when stopping: shutdown finishes every invocation first (H.flushed), then we answer. */
	while (inv->outcome == OUT_PENDING && !H.flushed)
		wait_slice();
	pthread_mutex_unlock(&H.lock);
	if (inv->outcome == OUT_PENDING) {
		inv_put(inv);
		return reply_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "ServiceException",
				   "lambda-host is shutting down");
	}
	/* Lambda answers 200 even for function errors and says so in X-Amz-Function-Error. */
	hdrs[0] = "X-Amzn-RequestId";
	hdrs[1] = inv->id;
	hdrs[2] = "X-Amz-Executed-Version";
	hdrs[3] = "$LATEST";
	hdrs[4] = "X-Amz-Function-Error";
	hdrs[5] = inv->outcome == OUT_RESPONSE ? NULL : "Unhandled";
	hdrs[6] = NULL;
	ret = reply(conn, MHD_HTTP_OK, inv->body, inv->body_len, hdrs);
	inv_put(inv);
	return ret;
}

static enum MHD_Result invoke_handler(void *cls, struct MHD_Connection *conn, const char *url,
				      const char *method, const char *version,
				      const char *upload, size_t *upload_size, void **con_cls)
{
	struct req *rq = *con_cls;

	if (!rq) {
		const char *name = url + strlen(INVOKE_PREFIX), *slash;

		if (!(rq = calloc(1, sizeof(*rq))))
			return MHD_NO;
		*con_cls = rq;
		rq->route = R_INVOKE;
		__atomic_add_fetch(&inflight_invokes, 1, __ATOMIC_ACQ_REL);
		rq->limit = MAX_EVENT_BYTES;
		slash = strncmp(url, INVOKE_PREFIX, strlen(INVOKE_PREFIX)) ? NULL : strchr(name, '/');
		/* Any function name is accepted, as RIE does: there is only one function here. */
		if (!slash || slash == name || strcmp(slash, "/invocations"))
			set_early(rq, 404, "ResourceNotFoundException",
				  "use POST /2015-03-31/functions/function/invocations");
		else if (strcmp(method, "POST"))
			set_early(rq, 405, "MethodNotAllowed", "use POST");
		else if (content_length_over(conn, rq->limit))
			rq->too_large = true;
		return MHD_YES;
	}
	if (*upload_size) {
		body_append(rq, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (rq->early_status)
		return reply(conn, (unsigned)rq->early_status, rq->early_body, strlen(rq->early_body), NULL);
	return invoke_final(conn, rq);
}

/* ---- listeners ---- */

/* Our own socket, so a busy port gives a precise error and port 0 works (MHD takes it over). */
static int listen_loopback(unsigned port, const char *what, unsigned short *bound)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		fprintf(stderr, "lambda-host: cannot listen on 127.0.0.1:%u (%s): %s\n", port, what,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*bound = ntohs(sa.sin_port);
	return fd;
}

static struct MHD_Daemon *start_daemon(int fd, MHD_AccessHandlerCallback cb, const char *what)
{
	struct MHD_Daemon *d;

	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			     MHD_USE_POLL | MHD_USE_ERROR_LOG,
			     0, NULL, NULL, cb, NULL,
			     MHD_OPTION_LISTEN_SOCKET, fd,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)MAX_HTTP_CONNS,
			     /* /next legitimately waits forever; MHD must not time it out. */
			     MHD_OPTION_CONNECTION_TIMEOUT, 0u,
			     MHD_OPTION_NOTIFY_COMPLETED, req_done, NULL,
			     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "lambda-host: cannot start the %s HTTP server (libmicrohttpd)\n", what);
		close(fd);
	}
	return d;
}

int servers_start(void)
{
	int rfd, ifd;

	rfd = listen_loopback(H.opt.runtime_port, "Runtime API", &H.runtime_port);
	if (rfd < 0)
		return -1;
	ifd = listen_loopback(H.opt.invoke_port, "invoke endpoint", &H.invoke_port);
	if (ifd < 0) {
		close(rfd);
		return -1;
	}
	rapi_d = start_daemon(rfd, runtime_handler, "Runtime API");
	if (!rapi_d) {
		close(ifd);
		return -1;
	}
	invoke_d = start_daemon(ifd, invoke_handler, "invoke endpoint");
	if (!invoke_d) {
		MHD_stop_daemon(rapi_d);
		rapi_d = NULL;
		return -1;
	}
	return 0;
}

void servers_stop(void)
{
	int i;

	/*
	 * Every invocation has its outcome by now (H.flushed); give the invoke handlers up to 2 s to
	 * send those answers, since stopping the daemon shuts their sockets down mid-write. Handlers
	 * blocked in /next notice H.stopping within WAIT_SLICE_MS and hang up.
	 */
	for (i = 0; i < 200 && __atomic_load_n(&inflight_invokes, __ATOMIC_ACQUIRE); i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (invoke_d)
		MHD_stop_daemon(invoke_d);
	if (rapi_d)
		MHD_stop_daemon(rapi_d);
	invoke_d = rapi_d = NULL;
}
