/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_sample — 100,000 allocations of known sizes from three sites, for --sample-bytes.
 *
 * Usage: wl_sample [--wait] [ROUNDS]     (--wait: block until SIGUSR1, see wl_common.h)
 *
 * Each of ROUNDS (default 10,000) rounds makes 6 x 48 bytes (scn_small), 3 x 512 bytes
 * (scn_medium) and 1 x 4096 bytes (scn_large), interleaved; everything stays live until all
 * rounds are done, then all of it is freed. Exact figures at the default:
 *   scn_small   a60000/2,880,000    scn_medium  a30000/15,360,000    scn_large  a10000/40,960,000
 *   totals 100,000 allocations, 59,200,000 bytes, peak live 100,000 blocks / 59,200,000 bytes,
 *   everything freed (live 0). Byte ratio small : medium : large = 2.88 : 15.36 : 40.96.
 * Under sampling, per-stack estimates vary around these; totals and peaks do not.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "wl_common.h"

WL_SCENARIO void *scn_small(void)
{
	void *p = malloc(wl_opaque_size(48));

	wl_sink(p);
	return p;
}

WL_SCENARIO void *scn_medium(void)
{
	void *p = malloc(wl_opaque_size(512));

	wl_sink(p);
	return p;
}

WL_SCENARIO void *scn_large(void)
{
	void *p = malloc(wl_opaque_size(4096));

	wl_sink(p);
	return p;
}

int main(int argc, char **argv)
{
	int a = wl_maybe_wait(argc, argv);
	long rounds = argc > a ? atol(argv[a]) : 10000, n = 0, i, k;
	void **p;

	if (rounds <= 0)
		return 2;
	/* The pointer array itself is one more allocation: mmap it instead. */
	p = wl_opaque_ptr(NULL);
	{
		extern void *mmap(void *, size_t, int, int, int, long);
		p = mmap(NULL, rounds * 10 * sizeof(*p), 3 /* RW */, 0x22 /* PRIVATE|ANON */, -1, 0);
		if (p == (void **)-1)
			return 3;
	}
	for (i = 0; i < rounds; i++) {
		for (k = 0; k < 6; k++)
			p[n++] = scn_small();
		for (k = 0; k < 3; k++)
			p[n++] = scn_medium();
		p[n++] = scn_large();
	}
	for (i = 0; i < n; i++)
		free(p[i]);
	wl_say(1, "wl: done\n");
	return 0;
}
