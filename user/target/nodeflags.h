/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * nodeflags.h — is the target node, and was it started with the two flags that make V8 name
 * its JavaScript frames in /tmp/perf-PID.map? --perf-basic-prof writes the map (compiled code);
 * --interpreted-frames-native-stack gives each interpreted function its own trampoline copy
 * there, so a function V8 has not compiled yet (its first invocations) is named too. Without
 * them JS frames are unnamed addresses (or Builtins_InterpreterEntryTrampoline).
 */
#ifndef PEAKTRACE_TARGET_NODEFLAGS_H
#define PEAKTRACE_TARGET_NODEFLAGS_H
#include <stddef.h>
#include <sys/types.h>

#define PT_NODE_PERF_BASIC_PROF 1u        /* --perf-basic-prof (or -only-functions) */
#define PT_NODE_INTERP_NATIVE_STACK 2u    /* --interpreted-frames-native-stack */
#define PT_NODE_FLAGS_ALL (PT_NODE_PERF_BASIC_PROF | PT_NODE_INTERP_NATIVE_STACK)

/* Which of the two flags are on (PT_NODE_* bits) in node's own options: argv (len bytes of
 * NUL-separated arguments, /proc/PID/cmdline, argv[0] first; the options end at the script, "-",
 * or "--") and NODE_OPTIONS (space-separated, may be NULL). Later "--no-..." turns one off; V8's
 * '_' spelling counts. Pure. */
unsigned pt_node_flags_parse(const char *argv, size_t len, const char *node_options);
/* 1 when the executable's base name (a path) is node's ("node", "nodejs"), else 0. Pure. */
int pt_node_is_node(const char *exe);
/* For a running target: 1 and *missing (PT_NODE_* bits not on) when it is node, 0 when it is
 * not, -errno when its cmdline cannot be read. Reads /proc/PID/cmdline and environ bounded
 * (target/proc.c); nothing of them is printed. */
int pt_node_flags_missing(pid_t pid, const char *exe, unsigned *missing);
/* The flags in missing, for a message: "--perf-basic-prof and --interpreted-frames-native-stack". */
const char *pt_node_flags_text(unsigned missing);
/* pt_node_flags_missing on pid's executable (/proc/PID/exe): when it is node and lacks a flag,
 * one "peaktrace: warning: ..." line on stderr saying which and what it costs, the same cost
 * (for the report's caveat) into note, and 1; else 0 (note untouched). */
int pt_node_flags_warn(pid_t pid, char *note, size_t len);

#endif
