// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * test_sha256: user/util/sha256.c against the FIPS 180-2 appendix B examples ("abc", the
 * 448-bit message, a million 'a') and the empty message, fed whole and in odd pieces (the
 * block buffering), and the cache key's use of it: pt_cfi_elf_digest on libc is stable, and
 * one byte of .eh_frame changed changes it.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check.h"
#include "unwind/cfi.h"
#include "util/elfutil.h"
#include "util/sha256.h"

static void hex(const uint8_t *d, char *out)
{
	for (int i = 0; i < PT_SHA256_LEN; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void vector(const char *name, const void *msg, size_t n, const char *want)
{
	uint8_t d[PT_SHA256_LEN];
	char got[65];
	struct pt_sha256 c;
	size_t i, step;

	pt_sha256(msg, n, d);
	hex(d, got);
	CHECK_STR(got, want, name);
	/* The same in pieces of 1, 7, 63, 64 and 65 bytes: every path through the buffer. */
	for (step = 1; step <= 65; step = step == 1 ? 7 : step == 7 ? 63 : step + 1) {
		pt_sha256_init(&c);
		for (i = 0; i < n; i += step)
			pt_sha256_update(&c, (const char *)msg + i, n - i < step ? n - i : step);
		pt_sha256_final(&c, d);
		hex(d, got);
		CHECK(!strcmp(got, want), "%s in pieces of %zu bytes", name, step);
	}
}

/* libc copied, one byte inside .eh_frame flipped: another digest. */
static void test_digest(void)
{
	const char *lib = "/lib/x86_64-linux-gnu/libc.so.6";
	char tmp[] = "/tmp/pt-sha-XXXXXX", cmd[256];
	uint8_t d1[32], d2[32], d3[32];
	struct pt_elf e;
	FILE *p;
	unsigned long off = 0;
	int fd, ok;

	CHECK(!pt_elf_open(lib, &e) && !pt_cfi_elf_digest(&e, d1) && !pt_cfi_elf_digest(&e, d2) &&
	      !memcmp(d1, d2, 32), "libc's CFI digest: the same twice");
	pt_elf_close(&e);
	fd = mkstemp(tmp);
	snprintf(cmd, sizeof(cmd), "cp %s %s && readelf -SW %s | awk '$2==\".eh_frame\"{print $5}'", lib, tmp, tmp);
	p = popen(cmd, "r");
	ok = fd >= 0 && p && fscanf(p, "%lx", &off) == 1 && off;
	if (p)
		pclose(p);
	if (ok) {
		unsigned char b;

		ok = pread(fd, &b, 1, off + 100) == 1;
		b ^= 1;
		ok = ok && pwrite(fd, &b, 1, off + 100) == 1;
	}
	CHECK(ok && !pt_elf_open(tmp, &e) && !pt_cfi_elf_digest(&e, d3) && memcmp(d1, d3, 32),
	      "one byte of .eh_frame changed: another digest (the build id is the same)");
	pt_elf_close(&e);
	if (fd >= 0)
		close(fd);
	unlink(tmp);
}

int main(void)
{
	char *mil = malloc(1000000);

	vector("empty", "", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	vector("abc", "abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	vector("448 bits", "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
	       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	vector("896 bits", "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
	       112, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
	if (mil) {
		memset(mil, 'a', 1000000);
		vector("a million 'a'", mil, 1000000,
		       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	}
	free(mil);
	test_digest();
	return CHECK_DONE();
}
