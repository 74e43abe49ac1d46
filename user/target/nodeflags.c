/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* nodeflags.c — node's perf-map flags in its command line and NODE_OPTIONS (nodeflags.h). */
#include "target/nodeflags.h"

#include <errno.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "target/proc.h"

/* node options that take their value as the next argument: it is not the script. */
static const char *const value_opts[] = {
	"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions",
	"--input-type", "--title", "--env-file", "--inspect-port", "--debug-port", "--eval", "-e",
	"--print", "-p", "--redirect-warnings", "--icu-data-dir", "--openssl-config",
	"--disable-warning", "--experimental-config-file",
};

/* One option (with '_' read as '-' past the leading dashes) applied to *on. */
static void apply_opt(const char *a, size_t n, unsigned *on)
{
	char buf[64];
	size_t i;
	bool neg;

	if (n < 2 || n >= sizeof(buf) || a[0] != '-' || a[1] != '-')
		return;
	for (i = 0; i < n; i++)
		buf[i] = i >= 2 && a[i] == '_' ? '-' : a[i];
	buf[n] = 0;
	neg = !strncmp(buf, "--no-", 5);
	const char *name = neg ? buf + 5 : buf + 2;
	unsigned bit = 0;

	if (!strcmp(name, "perf-basic-prof") || !strcmp(name, "perf-basic-prof-only-functions"))
		bit = PT_NODE_PERF_BASIC_PROF;
	else if (!strcmp(name, "interpreted-frames-native-stack"))
		bit = PT_NODE_INTERP_NATIVE_STACK;
	if (neg)
		*on &= ~bit;
	else
		*on |= bit;
}

static bool takes_value(const char *a)
{
	size_t i;

	for (i = 0; i < sizeof(value_opts) / sizeof(value_opts[0]); i++)
		if (!strcmp(a, value_opts[i]))
			return true;
	return false;
}

unsigned pt_node_flags_parse(const char *argv, size_t len, const char *node_options)
{
	unsigned on = 0;
	const char *p, *end;
	size_t n;

	/* NODE_OPTIONS first: the command line's own options come after it and win. */
	for (p = node_options; p && *p; p += n) {
		p += strspn(p, " \t\n");
		n = strcspn(p, " \t\n");
		apply_opt(p, n, &on);
	}
	if (!argv)
		return on;
	end = argv + len;
	p = memchr(argv, 0, len);          /* skip argv[0] */
	for (p = p ? p + 1 : end; p < end; p += n + 1) {
		const char *z = memchr(p, 0, (size_t)(end - p)), *eq;

		n = z ? (size_t)(z - p) : (size_t)(end - p);
		if (n < 2 || p[0] != '-' || (n == 2 && p[1] == '-'))
			break;                  /* the script, "-" (stdin) or "--": node's options end */
		if (z && takes_value(p)) {
			p += n + 1;            /* its value is the next argument */
			z = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
			if (!z)
				break;
			n = (size_t)(z - p);
			continue;
		}
		eq = memchr(p, '=', n);
		apply_opt(p, eq ? (size_t)(eq - p) : n, &on);
	}
	return on;
}

int pt_node_is_node(const char *exe)
{
	const char *b = exe ? strrchr(exe, '/') : NULL;

	b = b ? b + 1 : exe;
	return b && (!strcmp(b, "node") || !strcmp(b, "nodejs"));
}

int pt_node_flags_missing(pid_t pid, const char *exe, unsigned *missing)
{
	struct pt_environ env = { 0 };
	size_t len = 0;
	char *cmd;

	*missing = 0;
	if (!pt_node_is_node(exe))
		return 0;
	cmd = pt_proc_read(pid, "cmdline", &len);
	if (!cmd)
		return errno ? -errno : -EIO;
	if (pt_environ_read(pid, &env))
		env.buf = NULL;
	*missing = PT_NODE_FLAGS_ALL &
		   ~pt_node_flags_parse(cmd, len, env.buf ? pt_environ_get(&env, "NODE_OPTIONS") : NULL);
	pt_environ_free(&env);
	free(cmd);
	return 1;
}

const char *pt_node_flags_text(unsigned missing)
{
	switch (missing & PT_NODE_FLAGS_ALL) {
	case PT_NODE_FLAGS_ALL:
		return "--perf-basic-prof and --interpreted-frames-native-stack";
	case PT_NODE_PERF_BASIC_PROF:
		return "--perf-basic-prof";
	case PT_NODE_INTERP_NATIVE_STACK:
		return "--interpreted-frames-native-stack";
	}
	return "";
}

/* What the missing flags cost, for the warning and the caveat. */
static const char *flags_cost(unsigned missing)
{
	if (missing & PT_NODE_PERF_BASIC_PROF)
		return "node writes no /tmp/perf-PID.map, so its JavaScript frames are unnamed "
		       "addresses in every stack (JS heap pages and allocations are not attributed to "
		       "JS functions)";
	return "functions V8 has not compiled yet (their first invocations) run in the interpreter "
	       "and show as Builtins_InterpreterEntryTrampoline, not by name";
}

int pt_node_flags_warn(pid_t pid, char *note, size_t len)
{
	char exe[4096] = "";
	unsigned missing;

	pt_proc_exe(pid, exe, sizeof(exe));
	if (pt_node_flags_missing(pid, exe, &missing) <= 0 || !missing)
		return 0;
	snprintf(note, len, "node started without %s: %s", pt_node_flags_text(missing),
		 flags_cost(missing));
	fprintf(stderr, "peaktrace: warning: node (PID %d) was started without %s: %s; start it "
			"with --perf-basic-prof --interpreted-frames-native-stack (or put them in "
			"NODE_OPTIONS)\n", (int)pid, pt_node_flags_text(missing), flags_cost(missing));
	return 1;
}
