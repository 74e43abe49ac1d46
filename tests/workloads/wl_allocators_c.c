/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wl_allocators_c — wl_allocators' C scenario alone (wl_alloc_c_api.h), for C libraries without
 * C++: the test driver also builds it with musl-gcc (Debian musl-tools, dynamically linked against
 * /lib/ld-musl-x86_64.so.1, whose malloc peaktrace must find and probe).
 *
 * Usage: wl_allocators_c [--wait]     (--wait: block until SIGUSR1, see wl_common.h)
 * scn_c_api: a8 / 8924 bytes, f4 / 2624, live 4 / 6300.
 */
#define _GNU_SOURCE
#include "wl_alloc_c_api.h"

int main(int argc, char **argv)
{
	wl_maybe_wait(argc, argv);
	scn_c_api();
	return 0;
}
