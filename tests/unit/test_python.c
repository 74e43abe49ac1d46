// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_python.c — the pure parts of CPython frames: word tagging (bpf/pyframe.h), location
 * tables, frame names, the merge of Python runs into native stacks and the reader of
 * 3.13's _Py_DebugOffsets (user/python.c). */
#include <stdbool.h>
#include "check.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include "python/python.h"
#include "tests/unit/py313_debug_offsets.h"

static void test_words(void)
{
	__u64 code = 0x7f1234567890ULL, w = pt_py_frame_word(code, 42);

	CHECK(w >> 63, "frame word has the tag bit (never a user address)");
	CHECK(!pt_py_is_boundary(w), "frame word is not a boundary");
	CHECK_EQ_U64(pt_py_word_code(w), code, "code object round-trips");
	/* The highest x86-64 user address (4-level paging), on arm64 too (48 bits there). */
	CHECK_EQ_U64(pt_py_word_code(pt_py_frame_word(0x7ffffffffff8ULL, 42)), 0x7ffffffffff8ULL,
		     "the top of a 47-bit address space round-trips");
	CHECK_EQ_U64(pt_py_word_idx(w), 42, "instruction index round-trips");
	CHECK_EQ_U64(pt_py_word_idx(pt_py_frame_word(code, 1u << 30)), PT_PY_IDX_MAX, "index saturates");
	CHECK(pt_py_is_boundary(pt_py_boundary_word(PT_PY_B_ENTRY)), "entry boundary");
	CHECK_EQ_U64(pt_py_instr_idx(0x1000 + 10, 0x1000), 6, "instr 10 bytes in = unit 5, +1");
	CHECK_EQ_U64(pt_py_instr_idx(0x1000 - 2, 0x1000), 0, "instr before the code = unknown");
}

static void test_lines(void)
{
	/* Built by hand per Objects/locations.md:
	 *  0x80|0<<3|0: short form code 0, 1 unit, column byte          -> line +0 (10)
	 *  0x80|11<<3|1: one-line form +1, 2 units, two column bytes     -> 11
	 *  0x80|13<<3|2: no columns, svarint +3 (6), 3 units             -> 14
	 *  0x80|15<<3|0: no location, 1 unit                             -> -1
	 *  0x80|14<<3|0: long form, svarint -2 (5), end, cols, 1 unit    -> 12
	 *  0x80|13<<3|0: no columns, svarint +70 (140 = 0x4c|0x40, 2)    -> 82 */
	static const uint8_t t[] = {
		0x80, 0x05,
		0x80 | 11 << 3 | 1, 0x01, 0x02,
		0x80 | 13 << 3 | 2, 6,
		0x80 | 15 << 3,
		0x80 | 14 << 3, 5, 0, 1, 2,
		0x80 | 13 << 3, 0x4c | 0x40, 2,
	};

	CHECK_EQ_U64(pt_py_line(t, sizeof(t), 10, 0), 10, "unit 0: first line");
	CHECK_EQ_U64(pt_py_line(t, sizeof(t), 10, 1), 11, "unit 1: one-line form +1");
	CHECK_EQ_U64(pt_py_line(t, sizeof(t), 10, 2), 11, "unit 2: same entry");
	CHECK_EQ_U64(pt_py_line(t, sizeof(t), 10, 5), 14, "unit 5: no-columns form +3");
	CHECK(pt_py_line(t, sizeof(t), 10, 6) == -1, "unit 6: no location");
	CHECK_EQ_U64(pt_py_line(t, sizeof(t), 10, 7), 12, "unit 7: long form -2");
	CHECK_EQ_U64(pt_py_line(t, sizeof(t), 10, 8), 82, "unit 8: multi-byte varint +70");
	CHECK(pt_py_line(t, sizeof(t), 10, 9) == -1, "beyond the table");
	CHECK(pt_py_line((const uint8_t *)"\x05", 1, 10, 0) == -1, "corrupt table");
}

static void test_format(void)
{
	char b[128];

	pt_py_format(b, sizeof(b), "/srv/app/handler.py", "Job.run", 12);
	CHECK_STR(b, "handler:Job.run:12", "module:function:line");
	pt_py_format(b, sizeof(b), "<frozen importlib._bootstrap>", "_find_and_load", 1);
	CHECK_STR(b, "<frozen importlib._bootstrap>:_find_and_load:1", "non-file module");
}

static void test_splice(void)
{
	__u64 E = pt_py_boundary_word(PT_PY_B_ENTRY), T = pt_py_boundary_word(PT_PY_B_TRUNC);
	__u64 a = pt_py_frame_word(0x1000, 1), b = pt_py_frame_word(0x2000, 1);
	__u64 c = pt_py_frame_word(0x3000, 1);
	/* native, leaf first: malloc, eval, call, eval, main */
	bool ev[] = { false, true, false, true, false };
	struct pt_py_item it[16];
	uint32_t n, un;

	/* Two runs: [a b] in the inner eval frame, [c] in the outer one. */
	{
		__u64 w[] = { a, b, E, c, E };

		n = pt_py_splice(ev, 5, w, 5, it, 16, &un);
		CHECK_EQ_U64(n, 6, "two runs: 3 natives + 3 Python frames");
		CHECK(it[0].kind == PT_PY_ITEM_NATIVE && it[0].i == 0, "leaf native first");
		CHECK(it[1].kind == PT_PY_ITEM_PY && it[1].i == 0 && it[2].i == 1, "inner run replaces eval #1");
		CHECK(it[3].kind == PT_PY_ITEM_NATIVE && it[3].i == 2, "native between the runs");
		CHECK(it[4].kind == PT_PY_ITEM_PY && it[4].i == 3, "outer run replaces eval #2");
		CHECK(it[5].kind == PT_PY_ITEM_NATIVE && it[5].i == 4, "root native last");
		CHECK_EQ_U64(un, 0, "nothing unmatched");
	}
	/* 3.12+: a shim with no frame yet (empty run) keeps its native eval frame. */
	{
		__u64 w[] = { E, c, E };

		n = pt_py_splice(ev, 5, w, 3, it, 16, &un);
		CHECK(n == 5 && it[1].kind == PT_PY_ITEM_NATIVE && it[1].i == 1 &&
		      it[3].kind == PT_PY_ITEM_PY && it[3].i == 1, "empty run keeps the eval frame");
	}
	/* Truncated chain: the marker goes at the root end of the cut run. */
	{
		__u64 w[] = { a, b, T };

		n = pt_py_splice(ev, 5, w, 3, it, 16, &un);
		CHECK(n == 7 && it[3].kind == PT_PY_ITEM_TRUNC && it[4].kind == PT_PY_ITEM_NATIVE &&
		      it[4].i == 2, "truncation marked after the cut run");
	}
	/* More runs than eval frames (native stack cut): appended at the root, counted. */
	{
		bool ev1[] = { false, true };
		__u64 w[] = { a, E, b, E, c, E };

		n = pt_py_splice(ev1, 2, w, 6, it, 16, &un);
		CHECK(n == 4 && it[2].kind == PT_PY_ITEM_PY && it[3].i == 4, "left-over runs at the root");
		CHECK_EQ_U64(un, 2, "left-over frames counted");
	}
}

/* A copy of the real bytes with the 64-bit word at byte `at` set to v. */
static void with_word(uint8_t *buf, size_t at, uint64_t v)
{
	memcpy(buf, py313_debug_offsets, sizeof(py313_debug_offsets));
	memcpy(buf + at, &v, sizeof(v));
}

static int parse(const uint8_t *buf, size_t len, uint32_t hex, char *why)
{
	struct pt_py_offsets k;
	struct pt_py_user_off u;

	why[0] = 0;
	return pt_py_debug_offsets(buf, len, hex, &k, &u, why, 192);
}

static void test_debug_offsets(void)
{
	const uint32_t hex = 0x030d00f0;   /* Py_Version of that 3.13.0 */
	struct pt_py_offsets k;
	struct pt_py_user_off u;
	uint8_t buf[sizeof(py313_debug_offsets)];
	char why[192] = "";
	int err;

	/* The real bytes: the offsets offsetof() gives against 3.13.0's own headers (the
	 * table peaktrace carried for 3.13 before it read them from the target). */
	err = pt_py_debug_offsets(py313_debug_offsets, sizeof(py313_debug_offsets), hex, &k, &u, why,
				  sizeof(why));
	CHECK(err == 0, "3.13.0's debug offsets parse (%s)", why);
	CHECK_EQ_U64(k.interp_head, 632, "interpreters.head");
	CHECK_EQ_U64(k.threads_head, 7344, "threads.head");
	CHECK_EQ_U64(k.ts_next, 8, "PyThreadState.next");
	CHECK_EQ_U64(k.ts_native_tid, 160, "native_thread_id");
	CHECK_EQ_U64(k.ts_cframe, 0, "no cframe in 3.13");
	CHECK_EQ_U64(k.cframe_current, 72, "current_frame");
	CHECK_EQ_U64(k.fr_code, 0, "f_executable");
	CHECK_EQ_U64(k.fr_previous, 8, "previous");
	CHECK_EQ_U64(k.fr_instr, 56, "instr_ptr");
	CHECK_EQ_U64(k.fr_owner, 70, "owner");
	CHECK_EQ_U64(k.fr_is_entry, 0, "no is_entry in 3.13");
	CHECK_EQ_U64(k.co_code_adaptive, 200, "co_code_adaptive");
	CHECK_EQ_U64(k.minor, 13, "minor");
	CHECK(u.co_filename == 112 && u.co_name == 120 && u.co_qualname == 128 && u.co_linetable == 136 &&
	      u.co_firstlineno == 68, "code object fields");
	CHECK(u.bytes_sval == 32 && u.ascii_size == 40 && u.compact_size == 56 && u.str_length == 16 &&
	      u.str_state == 32 && u.tp_name == 24, "bytes, str and type fields");

	/* Altered copies: each refused, with a reason. */
	memcpy(buf, py313_debug_offsets, sizeof(buf));
	buf[0] = 'X';
	CHECK(parse(buf, sizeof(buf), hex, why) == -EPROTO && strstr(why, "cookie"), "bad cookie: %s", why);
	CHECK(parse(py313_debug_offsets, sizeof(buf), 0x030c01f0, why) == -EPROTO && strstr(why, "Py_Version"),
	      "version not the file's Py_Version: %s", why);
	with_word(buf, 8, 0x030e00f0);
	CHECK(parse(buf, sizeof(buf), 0x030e00f0, why) == -ENOTSUP && strstr(why, "3.14"),
	      "3.14's layout is not guessed: %s", why);
	with_word(buf, 16, 1);
	CHECK(parse(buf, sizeof(buf), hex, why) == -ENOTSUP && strstr(why, "free-threaded"),
	      "free-threaded refused: %s", why);
	with_word(buf, 72, 0x2f998);   /* threads.head = sizeof(PyInterpreterState) */
	CHECK(parse(buf, sizeof(buf), hex, why) == -EPROTO && strstr(why, "+72"),
	      "threads.head outside its structure: %s", why);
	with_word(buf, 240, 72);       /* f_executable beyond the frame bytes the BPF walk reads */
	CHECK(parse(buf, sizeof(buf), hex, why) == -EPROTO && strstr(why, "+240"),
	      "f_executable beyond the walk's read: %s", why);
	with_word(buf, 232, 12);       /* previous misaligned */
	CHECK(parse(buf, sizeof(buf), hex, why) == -EPROTO && strstr(why, "misaligned"),
	      "misaligned previous: %s", why);
	with_word(buf, 224, 1ULL << 40);   /* an absurd frame size */
	CHECK(parse(buf, sizeof(buf), hex, why) == -EPROTO && strstr(why, "implausible"),
	      "absurd structure size: %s", why);
	with_word(buf, 360, 0);        /* ob_type not at 8 */
	CHECK(parse(buf, sizeof(buf), hex, why) == -EPROTO && strstr(why, "ob_type"), "ob_type moved: %s", why);
	CHECK(parse(py313_debug_offsets, 100, hex, why) == -EPROTO, "short buffer: %s", why);
}

/*
 * pt_py_check_live on a real interpreter (Debian's python3.11, if installed) running Python
 * code: its table passes; the same table with one offset moved fails, naming what it found.
 */

/* The live check as the poll loop runs it: again every 100 ms until it decides (a failure must
 * repeat, PT_PY_CHECK_FAILS times in a row, before the offsets are refused). */
static int check_until_decided(pid_t pid, struct pt_py_info *info)
{
	int err = -EAGAIN;

	for (int k = 0; k < 10 && err == -EAGAIN; k++) {
		info->check_next_ns = 0;
		err = pt_py_check_live(pid, info);
	}
	return err;
}

static void test_live_check(void)
{
	const char *exe = "/usr/bin/python3.11";
	struct pt_py_info info, bad;
	int fds[2], err = -EAGAIN, k;
	pid_t pid;
	char c;

	if (access(exe, X_OK)) {
		printf("ok - live check # SKIP no %s\n", exe);
		return;
	}
	if (pipe(fds))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 1);
		execl(exe, exe, "-c", "import sys\ndef spin():\n    sys.stdout.write('r'); sys.stdout.flush()\n"
		      "    while True: pass\nspin()\n", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	CHECK(read(fds[0], &c, 1) == 1, "python3.11 started");
	memset(&info, 0, sizeof(info));
	CHECK(pt_py_detect_pid(pid, &info) == 0 && pt_py_locate(pid, &info) == 0, "python3.11 detected");
	for (k = 0; k < 50 && err == -EAGAIN; k++, usleep(20000)) {
		info.check = 0;
		info.check_next_ns = 0;
		err = pt_py_check_live(pid, &info);
	}
	CHECK(err == 0 && info.check == 1, "the 3.11 table passes on the live target (%d: %s)", err, info.why);
	bad = info;
	bad.check = 0;
	bad.check_fails = 0;
	bad.check_next_ns = 0;
	bad.off.ts_native_tid += 8;
	CHECK(check_until_decided(pid, &bad) == -EPROTO && bad.check_fails >= 3 && strstr(bad.why, "native_thread_id"),
	      "native_thread_id moved: refused: %s", bad.why);
	bad = info;
	bad.check = 0;
	bad.check_fails = 0;
	bad.check_next_ns = 0;
	bad.off.fr_code += 8;
	CHECK(check_until_decided(pid, &bad) == -EPROTO && strstr(bad.why, "not a code object"),
	      "f_code moved: refused: %s", bad.why);
	bad = info;
	bad.check = 0;
	bad.check_fails = 0;
	bad.check_next_ns = 0;
	bad.u.co_name = bad.u.co_firstlineno;   /* an int, not a pointer to a str */
	CHECK(check_until_decided(pid, &bad) == -EPROTO && strstr(bad.why, "co_name"),
	      "co_name moved: refused: %s", bad.why);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	pt_py_info_free(&info);
}

int main(void)
{
	test_words();
	test_lines();
	test_format();
	test_splice();
	test_debug_offsets();
	test_live_check();
	return CHECK_DONE();
}
