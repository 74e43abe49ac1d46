// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * invoke — send one event to lambda-host's (or RIE's) invoke endpoint and print the response.
 *
 * What `curl -d '{}' http://localhost:8180/2015-03-31/functions/function/invocations` does,
 * without needing curl, plus Lambda's function-error header turned into an exit status.
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "runtime.h"

enum { EXIT_OK = 0, EXIT_FUNC_ERROR = 1, EXIT_USAGE = 2, EXIT_CONNECT = 3, EXIT_HTTP = 4 };

static struct {
	const char *host;        /* -H: endpoint host (127.0.0.1) */
	unsigned port;           /* -p: endpoint port (8180, the host's default) */
	const char *function;    /* -n: function name in the path (function) */
	double timeout;          /* -t: seconds to wait for the answer (930) */
	const char *file;        /* -f: read the event from FILE (- = stdin) */
	const char *event;       /* EVENT argument */
	const char *type;        /* --type: X-Amz-Invocation-Type */
	bool verbose;            /* -v: status and request id on stderr */
} env = {
	.host = "127.0.0.1",
	.port = 8180,
	.function = "function",
	/* Lambda's maximum timeout is 900 s; wait a little longer than any invocation can take. */
	.timeout = 930,
};

const char *argp_program_version = "invoke 0.1";
static const char doc[] =
"Invoke the function behind lambda-host once and print its response.\n"
"\n"
"USAGE: invoke [-p PORT] [EVENT | -f FILE]"
"\v"
"EXAMPLES:\n"
"    invoke '{\"mb\": 64}'            # event on the command line\n"
"    invoke -f event.json -p 18080   # event from a file, another port\n"
"    echo '{}' | invoke -f -         # event from stdin\n"
"\n"
"Exit codes: 0 response, 1 function error (X-Amz-Function-Error), 2 usage,\n"
"3 cannot connect, 4 HTTP error from the endpoint.\n";

static const struct argp_option opts[] = {
	{ "port", 'p', "PORT", 0, "Invoke endpoint port on the host (default 8180)", 0 },
	{ "host", 'H', "HOST", 0, "Invoke endpoint host (default 127.0.0.1)", 0 },
	{ "function-name", 'n', "NAME", 0, "Function name in the URL (default function)", 0 },
	{ "timeout", 't', "SECONDS", 0, "Give up after SECONDS (default 930)", 0 },
	{ "file", 'f', "FILE", 0, "Read the event from FILE (- = stdin)", 0 },
	{ "type", 'T', "TYPE", 0, "X-Amz-Invocation-Type: RequestResponse, Event or DryRun", 0 },
	{ "verbose", 'v', NULL, 0, "Print the HTTP status and request id on stderr", 0 },
	{},
};

static void die_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "invoke: %s%s (see --help)\n", msg, arg);
	exit(EXIT_USAGE);
}

static error_t parse_arg(int key, char *arg, struct argp_state *st)
{
	char *end;

	switch (key) {
	case 'p':
		env.port = (unsigned)strtoul(arg, &end, 10);
		if (*end || !*arg || !env.port || env.port > 65535)
			die_usage("invalid port: ", arg);
		break;
	case 'H':
		env.host = arg;
		break;
	case 'n':
		if (!*arg || strpbrk(arg, "/ ?#%"))
			die_usage("invalid function name: ", arg);
		env.function = arg;
		break;
	case 't':
		env.timeout = strtod(arg, &end);
		if (*end || !(env.timeout > 0))
			die_usage("invalid timeout: ", arg);
		break;
	case 'f':
		env.file = arg;
		break;
	case 'T':
		env.type = arg;
		break;
	case 'v':
		env.verbose = true;
		break;
	case ARGP_KEY_ARG:
		if (env.event)
			die_usage("more than one event given: ", arg);
		env.event = arg;
		break;
	case ARGP_KEY_END:
		if (env.event && env.file)
			die_usage("give EVENT or -f FILE, not both", "");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int read_event(const char *path, struct rt_buf *out)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	char chunk[65536];
	size_t n;

	if (!f) {
		fprintf(stderr, "invoke: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (out->len + n > RT_MAX_BODY || rt_buf_append(out, chunk, n)) {
			fprintf(stderr, "invoke: %s: event larger than %u bytes\n", path, RT_MAX_BODY);
			if (f != stdin)
				fclose(f);
			return -1;
		}
	}
	if (f != stdin)
		fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct argp argp = { .options = opts, .parser = parse_arg, .doc = doc,
					  .args_doc = "[EVENT]" };
	struct rt_buf ev = { 0 };
	struct http_resp r = { 0 };
	struct http_conn c;
	char hostport[128], path[256], hdrs[256], ferr[64], rid[64];
	const char *why = "";
	int err, code;

	argp_parse(&argp, argc, argv, 0, NULL, NULL);
	if (env.file ? read_event(env.file, &ev) : rt_buf_append(&ev, env.event ? env.event : "{}",
								 strlen(env.event ? env.event : "{}")))
		return EXIT_USAGE;
	snprintf(hostport, sizeof(hostport), "%s:%u", env.host, env.port);
	snprintf(path, sizeof(path), "/2015-03-31/functions/%s/invocations", env.function);
	snprintf(hdrs, sizeof(hdrs), "Content-Type: application/json\r\n%s%s%s",
		 env.type ? "X-Amz-Invocation-Type: " : "", env.type ? env.type : "",
		 env.type ? "\r\n" : "");
	if (strpbrk(env.type ? env.type : "", "\r\n"))
		die_usage("invalid invocation type: ", env.type);
	if (http_init(&c, hostport, env.timeout))
		die_usage("invalid host: ", env.host);
	err = http_request(&c, "POST", path, hdrs, ev.data, ev.len, &r, &why);
	http_close(&c);
	if (err) {
		fprintf(stderr, "invoke: POST http://%s%s: %s: %s\n", hostport, path, why, strerror(-err));
		return EXIT_CONNECT;
	}
	if (env.verbose) {
		if (http_header(&r, "X-Amzn-RequestId", rid, sizeof(rid)) < 0)
			strcpy(rid, "-");
		fprintf(stderr, "invoke: HTTP %d, request id %s\n", r.status, rid);
	}
	if (r.body.len) {
		fwrite(r.body.data, 1, r.body.len, r.status >= 300 ? stderr : stdout);
		if (r.body.data[r.body.len - 1] != '\n')
			fputc('\n', r.status >= 300 ? stderr : stdout);
	}
	if (r.status >= 300) {
		fprintf(stderr, "invoke: HTTP %d from %s\n", r.status, hostport);
		code = EXIT_HTTP;
	} else if (http_header(&r, "X-Amz-Function-Error", ferr, sizeof(ferr)) >= 0) {
		fprintf(stderr, "invoke: function error (%s)\n", ferr);
		code = EXIT_FUNC_ERROR;
	} else {
		code = EXIT_OK;
	}
	http_resp_free(&r);
	rt_buf_free(&ev);
	return code;
}
