// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_host — the bundled Lambda-like host's request handling (tools/lambda-host/server.c): what
 * the runtime (the traced function, hostile) and the invoker send. libmicrohttpd does the HTTP
 * itself; this harness stands in for it, the way it calls the handlers: once with the method,
 * URL and headers, once per body piece, once at the end, then the completion callback. The
 * handlers' work below that is the host's own (main.c: invocations, END/REPORT lines;
 * logfmt.c: JSON errors, request ids). server.c and main.c are included (their functions are
 * static; main() is renamed), and the few MHD calls server.c makes are stubs here that check
 * what they are given.
 *
 * Input: [0] flags (bit 0: invoke endpoint, else Runtime API; 1: an invocation is current, its
 * id the URL's; 2: init done; 3: a runtime is running; 4: it is dying; 5: an event is queued),
 * [1] body piece size - 1, then text: "METHOD URL\n", header lines "Name: value\n", an empty
 * line, the body up to "\n\n", then trailer lines.
 */
#include <strings.h>
#include <sys/eventfd.h>
#include <microhttpd.h>
#define main lambda_host_main
#include "tools/lambda-host/main.c"
#undef main
#include "tools/lambda-host/server.c"
#include "fuzz.h"

#define MAX_FIELDS 32

struct MHD_Connection {
	const char *hk[MAX_FIELDS], *hv[MAX_FIELDS], *fk[MAX_FIELDS], *fv[MAX_FIELDS];
	int nh, nf;
	unsigned status;        /* queued answer, 0 = none */
};

struct MHD_Response {
	char *body;
	size_t len;
};

const char *MHD_lookup_connection_value(struct MHD_Connection *c, enum MHD_ValueKind kind,
					const char *key)
{
	const char **k = kind == MHD_FOOTER_KIND ? c->fk : c->hk, **v = kind == MHD_FOOTER_KIND ? c->fv : c->hv;
	int n = kind == MHD_FOOTER_KIND ? c->nf : c->nh;

	for (int i = 0; i < n; i++)
		if (!strcasecmp(k[i], key))
			return v[i];
	return NULL;
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
						     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = calloc(1, sizeof(*r));

	FUZZ_ASSERT(mode == MHD_RESPMEM_MUST_COPY);
	r->body = malloc(size + 1);
	memcpy(r->body, buffer, size);   /* every byte claimed must be there (ASan) */
	r->len = size;
	return r;
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *r, const char *h, const char *v)
{
	/* Header values go on the wire: no line breaks (response splitting). */
	FUZZ_ASSERT(h && v && !strpbrk(h, "\r\n") && !strpbrk(v, "\r\n"));
	return MHD_YES;
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *c, unsigned int status, struct MHD_Response *r)
{
	FUZZ_ASSERT(status >= 100 && status <= 599 && r && !c->status);
	c->status = status;
	return MHD_YES;
}

void MHD_destroy_response(struct MHD_Response *r)
{
	free(r->body);
	free(r);
}

const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *c,
							 enum MHD_ConnectionInfoType t, ...)
{
	return NULL;    /* peer_gone(): the peer is there */
}

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
				    void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	return NULL;
}

void MHD_stop_daemon(struct MHD_Daemon *d)
{
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	H.kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	H.opt.quiet = true;
	H.opt.region = "us-east-1";
	/* Max Memory Used from a file that is not there: no walk of /proc per invocation. */
	snprintf(H.sb.path, sizeof(H.sb.path), "/nonexistent-fuzz-cgroup");
	H.sb.peak_file = true;
	return 0;
}

/* Next '\n'-terminated line of [*p, end) as a string (cut in place), or NULL at the end. */
static char *next_line(char **p, char *end)
{
	char *s = *p, *nl;

	if (s >= end)
		return NULL;
	nl = memchr(s, '\n', (size_t)(end - s));
	if (!nl)
		nl = end;
	*nl = 0;
	*p = nl + 1;
	return s;
}

static void fields(char **p, char *end, const char **k, const char **v, int *n)
{
	char *line, *colon;

	while (*n < MAX_FIELDS && (line = next_line(p, end)) && *line) {
		if (!(colon = strchr(line, ':')))
			continue;
		*colon = 0;
		k[*n] = line;
		v[*n] = colon + 1 + strspn(colon + 1, " ");
		++*n;
	}
}

static void drain(void)
{
	struct invocation *inv;

	if (H.current) {
		inv_put(H.current);
		H.current = NULL;
	}
	while ((inv = H.head)) {
		H.head = inv->next;
		inv_put(inv);
	}
	H.tail = NULL;
	H.queued = 0;
	free(H.init_error);
	H.init_error = NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct MHD_Connection conn = { .nh = 0 };
	char *text, *p, *end, *line, *sp, *body, *bend;
	const char *method, *url;
	size_t piece, zero = 0;
	void *cls = NULL;
	uint8_t flags;
	MHD_AccessHandlerCallback handler;

	if (size < 3)
		return 0;
	flags = data[0];
	piece = (size_t)data[1] + 1;
	text = fuzz_str(data + 2, size - 2);
	p = text;
	end = text + size - 2;
	line = next_line(&p, end);
	if (!line || !(sp = strchr(line, ' '))) {
		free(text);
		return 0;
	}
	*sp = 0;
	method = line;
	url = sp + 1;
	fields(&p, end, conn.hk, conn.hv, &conn.nh);
	body = p < end ? p : end;
	bend = memmem(body, (size_t)(end - body), "\n\n", 2);
	if (bend) {
		p = bend + 2;
		fields(&p, end, conn.fk, conn.fv, &conn.nf);
	} else {
		bend = end;
	}

	H.generation = 1;
	H.stopping = H.flushed = false;
	H.runtime_pid = flags & 8 ? 4242 : 0;
	H.init_done = flags & 4;
	H.dying = flags & 16;
	H.cold = true;
	if (flags & 2) {
		const char *id = strstr(url, "/invocation/");

		H.current = inv_new("{}", 2);
		if (H.current && id) {
			id += strlen("/invocation/");
			snprintf(H.current->id, sizeof(H.current->id), "%.*s", (int)strcspn(id, "/"), id);
		}
		if (H.current)
			H.current->t_start = mono_now();
	}
	if (flags & 32) {
		struct invocation *q = inv_new("{\"queued\":1}", 12);

		if (q && inv_enqueue(q) == 0)
			inv_put(q);   /* the queue holds its own reference */
	}
	/* /next waits for work: let it find some, or hang up as when stopping. A sync invoke waits
	 * for the result: answered at once as when the host is shutting down. */
	H.stopping = !(H.runtime_pid && !H.dying && !H.current && H.head);
	H.flushed = true;

	handler = flags & 1 ? invoke_handler : runtime_handler;
	if (handler(NULL, &conn, url, method, "HTTP/1.1", NULL, &zero, &cls) == MHD_YES) {
		for (char *b = body; b < bend; b += piece) {
			size_t n = (size_t)(bend - b) < piece ? (size_t)(bend - b) : piece;

			if (handler(NULL, &conn, url, method, "HTTP/1.1", b, &n, &cls) != MHD_YES)
				break;
			FUZZ_ASSERT(n == 0);
		}
		zero = 0;
		(void)handler(NULL, &conn, url, method, "HTTP/1.1", NULL, &zero, &cls);
	}
	req_done(NULL, &conn, &cls, MHD_REQUEST_TERMINATED_COMPLETED_OK);
	FUZZ_ASSERT(cls == NULL);
	drain();
	free(text);
	return 0;
}
