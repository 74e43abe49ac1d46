// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * runtime.c — HTTP/1.1 client over one keep-alive socket and the Lambda runtime loop on top.
 *
 * The client side is hand-written on purpose: it is small, it must use specific syscalls (send,
 * writev, recv) so the tracer's Runtime API detector has something realistic to see, and it only
 * ever talks to lambda-host or the real Lambda Runtime API. Every length it reads is bounded
 * (RT_MAX_HEAD, RT_MAX_BODY), so a broken peer gives an error, never a crash.
 */
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>
#include "runtime.h"

/* ---- growable buffer ---- */

int rt_buf_reserve(struct rt_buf *b, size_t extra)
{
	size_t want, cap;
	char *p;

	if (extra > RT_MAX_BODY * 2 || b->len + extra + 1 < b->len)
		return -EFBIG;
	want = b->len + extra + 1;
	if (want <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < want)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int rt_buf_append(struct rt_buf *b, const void *p, size_t n)
{
	int err = rt_buf_reserve(b, n);

	if (err)
		return err;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int rt_buf_printf(struct rt_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n, err;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	err = rt_buf_reserve(b, (size_t)n);
	if (err)
		return err;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

int rt_buf_json_str(struct rt_buf *b, const char *s)
{
	int err = rt_buf_append(b, "\"", 1);

	for (; !err && *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			err = rt_buf_printf(b, "\\%c", ch);
		else if (ch == '\n')
			err = rt_buf_append(b, "\\n", 2);
		else if (ch < 0x20)
			err = rt_buf_printf(b, "\\u%04x", ch);
		else
			err = rt_buf_append(b, s, 1);
	}
	return err ? err : rt_buf_append(b, "\"", 1);
}

void rt_buf_reset(struct rt_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void rt_buf_free(struct rt_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

/* ---- HTTP client ---- */

int http_init(struct http_conn *c, const char *hostport, double timeout_s)
{
	const char *colon = strrchr(hostport, ':');
	size_t hl;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->timeout_s = timeout_s;
	if (!colon || colon == hostport || !colon[1] || strlen(colon + 1) >= sizeof(c->port))
		return -EINVAL;
	hl = (size_t)(colon - hostport);
	if (hl >= sizeof(c->host))
		return -EINVAL;
	memcpy(c->host, hostport, hl);
	c->host[hl] = '\0';
	strcpy(c->port, colon + 1);
	/* A peer that closes mid-write must give EPIPE, not kill the function. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int http_connect(struct http_conn *c, const char **why)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai = NULL;
	int fd, one = 1, err;

	err = getaddrinfo(c->host, c->port, &hints, &ai);
	if (err) {
		*why = "cannot resolve the host";
		return -EHOSTUNREACH;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		freeaddrinfo(ai);
		*why = "socket";
		return err;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		err = -errno;
		close(fd);
		freeaddrinfo(ai);
		*why = "connect";
		return err;
	}
	freeaddrinfo(ai);
	/* Small request/response exchanges: do not let Nagle delay the body behind the headers. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (c->timeout_s > 0) {
		struct timeval tv = { .tv_sec = (time_t)c->timeout_s,
				      .tv_usec = (suseconds_t)((c->timeout_s - (time_t)c->timeout_s) * 1e6) };

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	}
	c->fd = fd;
	rt_buf_reset(&c->in);
	return 0;
}

void http_close(struct http_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	rt_buf_reset(&c->in);
}

void http_resp_free(struct http_resp *r)
{
	rt_buf_free(&r->head);
	rt_buf_free(&r->body);
}

/* Drop the first n bytes of the receive buffer. */
static void in_take(struct http_conn *c, size_t n)
{
	if (n >= c->in.len) {
		rt_buf_reset(&c->in);
		return;
	}
	memmove(c->in.data, c->in.data + n, c->in.len - n);
	c->in.len -= n;
	c->in.data[c->in.len] = '\0';
}

/* One recv() into the receive buffer: >0 bytes, 0 on EOF, -errno. */
static int in_fill(struct http_conn *c)
{
	ssize_t n;
	int err = rt_buf_reserve(&c->in, 65536);

	if (err)
		return err;
	do
		n = recv(c->fd, c->in.data + c->in.len, c->in.cap - c->in.len - 1, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EAGAIN ? -ETIMEDOUT : -errno;
	c->in.len += (size_t)n;
	c->in.data[c->in.len] = '\0';
	return (int)(n > 0);
}

static int send_all(int fd, struct iovec *iov, int cnt)
{
	while (cnt > 0) {
		ssize_t n;

		/* Body-less requests go out with send() (sendto), bodies with writev(). */
		if (cnt == 1)
			n = send(fd, iov[0].iov_base, iov[0].iov_len, MSG_NOSIGNAL);
		else
			n = writev(fd, iov, cnt);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		while (cnt > 0 && (size_t)n >= iov[0].iov_len) {
			n -= (ssize_t)iov[0].iov_len;
			iov++;
			cnt--;
		}
		if (cnt > 0) {
			iov[0].iov_base = (char *)iov[0].iov_base + n;
			iov[0].iov_len -= (size_t)n;
		}
	}
	return 0;
}

/* Case-insensitive search for "\r\nName:" in a header block; returns the value start. */
static const char *find_header(const char *head, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);
	const char *p = strstr(head, "\r\n");

	while (p && p[2]) {
		const char *line = p + 2, *end = strstr(line, "\r\n");

		if (!end)
			break;
		if ((size_t)(end - line) > nl && !strncasecmp(line, name, nl) && line[nl] == ':') {
			const char *v = line + nl + 1;

			while (v < end && (*v == ' ' || *v == '\t'))
				v++;
			while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
				end--;
			*vlen = (size_t)(end - v);
			return v;
		}
		p = end;
	}
	return NULL;
}

int http_header(const struct http_resp *r, const char *name, char *out, size_t outsz)
{
	size_t vlen;
	const char *v = r->head.data ? find_header(r->head.data, name, &vlen) : NULL;

	if (!v || !outsz)
		return -1;
	if (vlen >= outsz)
		vlen = outsz - 1;
	memcpy(out, v, vlen);
	out[vlen] = '\0';
	return (int)vlen;
}

/* The first "\r\n" in c->in at or after off, searching at most max bytes (bodies are binary:
 * no strstr); NULL when not there yet. */
static char *in_eol(const struct http_conn *c, size_t off, size_t max)
{
	size_t n = c->in.len - off;

	if (!c->in.data || off >= c->in.len)
		return NULL;
	return memmem(c->in.data + off, n < max ? n : max, "\r\n", 2);
}

/* Read "SIZE[;ext]\r\n ... data\r\n" chunks until "0\r\n" and the trailer section. The chunks
 * already received are consumed through an offset and the buffer is compacted once per recv,
 * not once per chunk (many small chunks cost linear time, not quadratic). */
static int read_chunked(struct http_conn *c, struct http_resp *r, const char **why)
{
	size_t off = 0;
	int n = 0;

	for (;;) {
		char *eol, *end;
		unsigned long long sz;

		while (!(eol = in_eol(c, off, 1026))) {
			if (c->in.len - off > 1024) {
				*why = "bad chunk header";
				return -EPROTO;
			}
			in_take(c, off);
			off = 0;
			if ((n = in_fill(c)) <= 0)
				goto short_read;
		}
		errno = 0;
		sz = strtoull(c->in.data + off, &end, 16);
		if (errno || end == c->in.data + off || (*end != ';' && *end != '\r' && *end != ' ')) {
			*why = "bad chunk size";
			return -EPROTO;
		}
		if (sz > RT_MAX_BODY || r->body.len + sz > RT_MAX_BODY) {
			*why = "body too large";
			return -EFBIG;
		}
		off = (size_t)(eol + 2 - c->in.data);
		if (sz == 0) {
			/* Trailer fields end with an empty line. */
			for (;;) {
				while (!(eol = in_eol(c, off, RT_MAX_HEAD + 2))) {
					if (c->in.len - off > RT_MAX_HEAD) {
						*why = "trailers too large";
						return -EPROTO;
					}
					in_take(c, off);
					off = 0;
					if ((n = in_fill(c)) <= 0)
						goto short_read;
				}
				if (eol == c->in.data + off) {
					in_take(c, off + 2);
					return 0;
				}
				off = (size_t)(eol + 2 - c->in.data);
			}
		}
		while (c->in.len - off < sz + 2) {
			in_take(c, off);
			off = 0;
			if ((n = in_fill(c)) <= 0)
				goto short_read;
		}
		if (memcmp(c->in.data + off + sz, "\r\n", 2)) {
			*why = "bad chunk end";
			return -EPROTO;
		}
		if (rt_buf_append(&r->body, c->in.data + off, (size_t)sz)) {
			*why = "out of memory";
			return -ENOMEM;
		}
		off += (size_t)sz + 2;
		continue;
short_read:
		*why = n < 0 ? "recv" : "connection closed mid-body";
		return n < 0 ? n : -ECONNRESET;
	}
}

static int read_response(struct http_conn *c, struct http_resp *r, bool *got_any, const char **why)
{
	char *hend, val[64];
	size_t hlen;
	long long clen = -1;
	int n, major, minor;

	rt_buf_reset(&r->head);
	rt_buf_reset(&r->body);
	r->status = 0;
	r->close = false;
	while (!(hend = strstr(c->in.data ? c->in.data : "", "\r\n\r\n"))) {
		if (c->in.len > RT_MAX_HEAD) {
			*why = "response headers too large";
			return -EPROTO;
		}
		n = in_fill(c);
		if (n <= 0) {
			*why = n < 0 ? "recv" : "connection closed";
			return n < 0 ? n : -ECONNRESET;
		}
		*got_any = true;
	}
	*got_any = true;
	hlen = (size_t)(hend + 4 - c->in.data);
	if (rt_buf_append(&r->head, c->in.data, hlen - 2)) {
		*why = "out of memory";
		return -ENOMEM;
	}
	in_take(c, hlen);
	if (sscanf(r->head.data, "HTTP/%d.%d %d", &major, &minor, &r->status) != 3 ||
	    r->status < 100 || r->status > 999) {
		*why = "malformed status line";
		return -EPROTO;
	}
	if (http_header(r, "Connection", val, sizeof(val)) >= 0 && !strcasecmp(val, "close"))
		r->close = true;
	if (major == 1 && minor == 0 &&
	    !(http_header(r, "Connection", val, sizeof(val)) >= 0 && !strcasecmp(val, "keep-alive")))
		r->close = true;
	if (http_header(r, "Transfer-Encoding", val, sizeof(val)) >= 0 && strcasestr(val, "chunked"))
		return read_chunked(c, r, why);
	if (http_header(r, "Content-Length", val, sizeof(val)) >= 0) {
		char *end;

		errno = 0;
		clen = strtoll(val, &end, 10);
		if (errno || *end || clen < 0) {
			*why = "bad Content-Length";
			return -EPROTO;
		}
	}
	if (r->status == 204 || r->status == 304 || r->status < 200)
		clen = 0;
	if (clen > (long long)RT_MAX_BODY) {
		*why = "body too large";
		return -EFBIG;
	}
	if (clen >= 0) {
		size_t have = c->in.len < (size_t)clen ? c->in.len : (size_t)clen;

		/* Straight into the body buffer: no second copy of a 6 MiB event. */
		if (rt_buf_reserve(&r->body, (size_t)clen) || rt_buf_append(&r->body, c->in.data, have)) {
			*why = "out of memory";
			return -ENOMEM;
		}
		in_take(c, have);
		while (r->body.len < (size_t)clen) {
			ssize_t got;

			do
				got = recv(c->fd, r->body.data + r->body.len, (size_t)clen - r->body.len, 0);
			while (got < 0 && errno == EINTR);
			if (got <= 0) {
				*why = got < 0 ? "recv" : "connection closed mid-body";
				return got < 0 ? (errno == EAGAIN ? -ETIMEDOUT : -errno) : -ECONNRESET;
			}
			r->body.len += (size_t)got;
		}
		r->body.data[r->body.len] = '\0';
		return 0;
	}
	/* Neither length nor chunked: the body runs to the end of the connection. */
	r->close = true;
	for (;;) {
		if (rt_buf_append(&r->body, c->in.data, c->in.len)) {
			*why = "out of memory";
			return -ENOMEM;
		}
		rt_buf_reset(&c->in);
		if (r->body.len > RT_MAX_BODY) {
			*why = "body too large";
			return -EFBIG;
		}
		n = in_fill(c);
		if (n < 0) {
			*why = "recv";
			return n;
		}
		if (n == 0)
			return 0;
	}
}

int http_request(struct http_conn *c, const char *method, const char *path,
		 const char *extra_headers, const void *body, size_t len,
		 struct http_resp *r, const char **why)
{
	char head[2048];
	int hl, attempt, err = 0;

	hl = snprintf(head, sizeof(head),
		      "%s %s HTTP/1.1\r\nHost: %s:%s\r\nUser-Agent: peaktrace-runtime/1\r\n"
		      "%s%s",
		      method, path, c->host, c->port, extra_headers ? extra_headers : "",
		      body || !strcmp(method, "POST") ? "" : "\r\n");
	if (hl < 0 || (size_t)hl >= sizeof(head) - 64) {
		*why = "request line too long";
		return -E2BIG;
	}
	if (body || !strcmp(method, "POST"))
		hl += snprintf(head + hl, sizeof(head) - (size_t)hl, "Content-Length: %zu\r\n\r\n", len);

	for (attempt = 0; attempt < 2; attempt++) {
		struct iovec iov[2] = { { head, (size_t)hl }, { (void *)body, len } };
		bool fresh = c->fd < 0, got_any = false;

		if (fresh && (err = http_connect(c, why)))
			return err;
		err = send_all(c->fd, iov, len ? 2 : 1);
		if (err)
			*why = "send";
		else
			err = read_response(c, r, &got_any, why);
		if (!err) {
			if (r->close)
				http_close(c);
			return 0;
		}
		http_close(c);
		/*
		 * A keep-alive connection the server closed while idle fails on the first send or
		 * reads EOF before any byte: retry once on a new connection. Anything else is real.
		 */
		if (fresh || got_any || err == -ETIMEDOUT)
			break;
	}
	return err;
}

/* ---- JSON scraps for the sample events ---- */

static const char *json_find_value(const char *json, size_t len, const char *key)
{
	size_t kl = strlen(key);
	const char *p = json, *end = json + len;

	while (p && p < end) {
		const char *q = memchr(p, '"', (size_t)(end - p));

		if (!q || (size_t)(end - q) < kl + 2)
			return NULL;
		if (!memcmp(q + 1, key, kl) && q[kl + 1] == '"') {
			const char *v = q + kl + 2;

			while (v < end && isspace((unsigned char)*v))
				v++;
			if (v < end && *v == ':') {
				v++;
				while (v < end && isspace((unsigned char)*v))
					v++;
				return v < end ? v : NULL;
			}
		}
		p = q + 1;
	}
	return NULL;
}

long long rt_json_int(const char *json, size_t len, const char *key, long long dflt)
{
	const char *v = json ? json_find_value(json, len, key) : NULL;
	char num[32], *end;
	size_t n = 0;
	long long x;

	if (!v)
		return dflt;
	while (v + n < json + len && n < sizeof(num) - 1 && (isdigit((unsigned char)v[n]) || v[n] == '-'))
		n++;
	memcpy(num, v, n);
	num[n] = '\0';
	errno = 0;
	x = strtoll(num, &end, 10);
	if (!n || errno || *end)
		return dflt;
	return x;
}

bool rt_json_bool(const char *json, size_t len, const char *key, bool dflt)
{
	const char *v = json ? json_find_value(json, len, key) : NULL;
	size_t left = v ? (size_t)(json + len - v) : 0;

	if (v && left >= 4 && !memcmp(v, "true", 4))
		return true;
	if (v && left >= 5 && !memcmp(v, "false", 5))
		return false;
	return dflt;
}

/* ---- runtime loop ---- */

int rt_error_json(struct rt_buf *out, const char *type, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	rt_buf_reset(out);
	return rt_buf_append(out, "{\"errorMessage\":", 16) || rt_buf_json_str(out, msg) ||
	       rt_buf_append(out, ",\"errorType\":", 13) || rt_buf_json_str(out, type) ||
	       rt_buf_append(out, "}", 1);
}

void rt_init_error(const char *type, const char *msg)
{
	const char *api = getenv("AWS_LAMBDA_RUNTIME_API"), *why = "";
	struct http_conn c;
	struct http_resp r = { 0 };
	struct rt_buf body = { 0 };
	char hdr[256];

	fprintf(stderr, "init error: %s: %s\n", type, msg);
	if (api && !http_init(&c, api, 5.0) && !rt_error_json(&body, type, "%s", msg)) {
		snprintf(hdr, sizeof(hdr), "Lambda-Runtime-Function-Error-Type: %s\r\n"
			 "Content-Type: application/json\r\n", type);
		if (http_request(&c, "POST", "/2018-06-01/runtime/init/error", hdr, body.data, body.len,
				 &r, &why))
			fprintf(stderr, "init error: could not report it: %s\n", why);
		http_close(&c);
	}
	exit(1);
}

int rt_run(const char *name, rt_handler_fn fn, void *arg)
{
	const char *api = getenv("AWS_LAMBDA_RUNTIME_API"), *why = "";
	static char id[128], arn[512], trace[512], path[256], dl[32];
	struct http_resp next = { 0 }, post = { 0 };
	struct rt_buf out = { 0 };
	struct http_conn c;
	int err;

	if (!api || !*api) {
		fprintf(stderr, "%s: AWS_LAMBDA_RUNTIME_API is not set (start me with lambda-host -- %s)\n",
			name, name);
		return 1;
	}
	if (http_init(&c, api, 0)) {
		fprintf(stderr, "%s: bad AWS_LAMBDA_RUNTIME_API '%s' (want HOST:PORT)\n", name, api);
		return 1;
	}
	for (;;) {
		struct rt_event ev;
		int rc;

		err = http_request(&c, "GET", "/2018-06-01/runtime/invocation/next", NULL, NULL, 0,
				   &next, &why);
		if (err) {
			fprintf(stderr, "%s: GET /runtime/invocation/next on %s: %s: %s\n", name, api, why,
				strerror(-err));
			return 1;
		}
		if (next.status != 200 || http_header(&next, "Lambda-Runtime-Aws-Request-Id", id,
						       sizeof(id)) <= 0) {
			fprintf(stderr, "%s: GET /runtime/invocation/next: HTTP %d without a request id\n",
				name, next.status);
			return 1;
		}
		if (http_header(&next, "Lambda-Runtime-Invoked-Function-Arn", arn, sizeof(arn)) < 0)
			arn[0] = '\0';
		if (http_header(&next, "Lambda-Runtime-Trace-Id", trace, sizeof(trace)) < 0)
			trace[0] = '\0';
		if (http_header(&next, "Lambda-Runtime-Deadline-Ms", dl, sizeof(dl)) < 0)
			dl[0] = '\0';
		ev = (struct rt_event){ .request_id = id, .deadline_ms = atoll(dl), .function_arn = arn,
					.trace_id = trace, .body = next.body.data ? next.body.data : "",
					.len = next.body.len };
		rt_buf_reset(&out);
		rc = fn(&ev, &out, arg);
		snprintf(path, sizeof(path), "/2018-06-01/runtime/invocation/%s/%s", id,
			 rc == RT_OK ? "response" : "error");
		err = http_request(&c, "POST", path,
				   rc == RT_OK ? "Content-Type: application/json\r\n"
					       : "Content-Type: application/json\r\n"
						 "Lambda-Runtime-Function-Error-Type: Unhandled\r\n",
				   out.data ? out.data : "", out.len, &post, &why);
		if (err) {
			fprintf(stderr, "%s: POST %s: %s: %s\n", name, path, why, strerror(-err));
			return 1;
		}
		/* 413: the host already failed the invocation with Function.ResponseSizeTooLarge. */
		if (post.status != 202)
			fprintf(stderr, "%s: POST %s: HTTP %d %s\n", name, path, post.status,
				post.body.data ? post.body.data : "");
	}
}
