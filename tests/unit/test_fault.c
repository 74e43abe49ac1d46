// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_fault: arm64's page faults from handle_mm_fault's entry (bpf/fault.h): each sequence of
 * calls the fault handler makes for one fault is counted once, and a new fault is counted. */
#include <stdbool.h>
#include "check.h"
#include "bpf/fault.h"

/* The kernel's enum fault_flag (include/linux/mm_types.h, 6.4+). */
#define WRITE    (1u << 0)
#define TRIED    (1u << 5)
#define USER     (1u << 6)
#define VMA_LOCK (1u << 12)

struct call { unsigned flags; unsigned long addr; };

/* How many faults a thread's calls count, as rss_mm_fault counts them (the address stays
 * pending: no page was made resident in between). */
static int count(const struct call *c, int n, const struct pt_fault_bits *b)
{
	unsigned prev = 0;
	unsigned long pending = 0;
	int faults = 0;

	for (int i = 0; i < n; i++) {
		faults += !pt_fault_is_retry(prev, c[i].flags, pending == c[i].addr, b);
		prev = c[i].flags;
		pending = c[i].addr;
	}
	return faults;
}

int main(void)
{
	const struct pt_fault_bits b = { TRIED, USER, VMA_LOCK }, old = { TRIED, USER, 0 };
	const unsigned u = USER | WRITE;
	/* A new anonymous mapping's first write: the VMA-lock try retries under mmap_lock. */
	const struct call anon_first[] = { { u | VMA_LOCK, 0x1000 }, { u, 0x1000 } };
	/* A file page being read: VMA lock, mmap_lock, then mmap_lock again with TRIED. */
	const struct call major[] = { { u | VMA_LOCK, 0x2000 }, { u | TRIED, 0x2000 },
				      { u | TRIED, 0x2000 } };
	/* Two user faults on one page (a read of the zero page, then a write): both counted. */
	const struct call read_write[] = { { USER | VMA_LOCK, 0x3000 }, { u | VMA_LOCK, 0x3000 } };
	/* A user read, then read() writing into the page from the kernel: two faults. */
	const struct call user_kernel[] = { { USER | VMA_LOCK, 0x4000 }, { WRITE, 0x4000 } };
	/* A kernel fault retried under mmap_lock. */
	const struct call kernel_retry[] = { { WRITE, 0x5000 }, { WRITE | TRIED, 0x5000 } };
	/* A VMA-lock fault, then a new user fault elsewhere whose VMA was not locked under RCU. */
	const struct call elsewhere[] = { { u | VMA_LOCK, 0x6000 }, { u, 0x7000 } };
	/* Before 6.4 (no VMA_LOCK flag): only TRIED marks a retry. */
	const struct call pre64[] = { { u, 0x8000 }, { u | TRIED, 0x8000 }, { u, 0x8000 } };
	/* The one case taken for a retry wrongly (fault.h): same address, VMA not locked. */
	const struct call ambiguous[] = { { USER | VMA_LOCK, 0x9000 }, { USER, 0x9000 } };

	CHECK(count(anon_first, 2, &b) == 1, "VMA lock, then mmap_lock: one fault");
	CHECK(count(major, 3, &b) == 1, "VMA lock, mmap_lock with TRIED twice: one fault");
	CHECK(count(read_write, 2, &b) == 2, "a read then a write on one page: two faults");
	CHECK(count(user_kernel, 2, &b) == 2, "a user fault then a kernel one on its page: two");
	CHECK(count(kernel_retry, 2, &b) == 1, "a kernel fault and its TRIED retry: one");
	CHECK(count(elsewhere, 2, &b) == 2, "a fault at another address after a VMA-lock one: two");
	CHECK(count(pre64, 3, &old) == 2, "before 6.4: a fault, its TRIED retry, a new fault: two");
	CHECK(count(ambiguous, 2, &b) == 1, "the ambiguous case: taken for a retry (fault.h says so)");
	return CHECK_DONE();
}
