/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_static — a static, stripped program: no mapped object defines a malloc symbol,
 * so peaktrace must refuse it (exit 5, "unsupported target").
 *
 * Built by tests/run.py with `gcc -static -s`. Usage: wl_static [SECONDS]
 * Sleeps SECONDS (default 30) and exits 0, so an attach test has a live target and a
 * launch test that wrongly succeeds still ends.
 */
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned int secs = argc > 1 ? (unsigned int)atoi(argv[1]) : 30;
	while (secs > 0)
		secs = sleep(secs);
	return 0;
}
