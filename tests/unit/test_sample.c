// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_sample: the integer math of --sample-bytes (bpf/sample.h) against libm, and the sampler
 * it drives (countdown + weights) against the statistics it promises. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include "check.h"
#include "bpf/sample.h"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;

static uint32_t xrand(void)
{
	/* xorshift64*: the host stand-in for bpf_get_prandom_u32(). */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545F4914F6CDD1DULL) >> 32);
}

/* One sampled site: n allocations of size bytes through the per-thread countdown. Returns the
 * byte estimate; *count_est the count estimate, *hits the sampled allocations. */
static double run_site(uint64_t mean, uint64_t size, long n, __u64 *left, double *count_est,
		       long *hits)
{
	double bytes = 0, count = 0;
	long i;

	*hits = 0;
	for (i = 0; i < n; i++) {
		if (!*left)
			*left = pt_sample_gap(mean, xrand());
		if (!pt_sample_hit(left, size))
			continue;
		*left = pt_sample_gap(mean, xrand());
		__u64 wb, wc;

		pt_sample_weights(mean, size, &wb, &wc);
		bytes += (double)wb;
		count += (double)wc / (1 << PT_SAMPLE_COUNT_SHIFT);
		++*hits;
	}
	*count_est = count;
	return bytes;
}

int main(void)
{
	double maxerr = 0, sum = 0, x;
	int i, bad = 0;
	long k;

	/* Tables: every entry is what libm says, to the last unit. */
	for (i = 0; i < 257; i++)
		if (fabs(pt_negln_tab[i] - (-log((256.0 + i) / 512.0) * 65536.0)) > 0.5)
			bad++;
	CHECK(bad == 0, "-ln table: 257 entries within 0.5 unit of libm (%d off)", bad);
	bad = 0;
	for (i = 1; i < 1025; i++) {
		x = i / 64.0;
		if (fabs(pt_g_tab[i] - x / -expm1(-x) * (1 << PT_G_SHIFT)) > 0.5)
			bad++;
	}
	CHECK(bad == 0 && pt_g_tab[0] == 1u << PT_G_SHIFT,
	      "g table: 1025 entries within 0.5 unit of x/(1-exp(-x)) (%d off)", bad);

	/* The exponential draw: -ln(r / 2^32) for r spread over the whole 32-bit range (a
	 * stratified sweep, so its mean is E[-ln U] = 1 up to the sweep's resolution). */
	for (k = 0; k < 1000000; k++) {
		uint32_t r = (uint32_t)(((uint64_t)k << 32) / 1000000 + 2147);
		double want = -log(r / 4294967296.0), got = pt_sample_negln(r) / 65536.0;

		if (fabs(got - want) > maxerr)
			maxerr = fabs(got - want);
		sum += got;
	}
	CHECK(maxerr < 1e-4, "-ln(u) draw within 1e-4 of libm over 1e6 values (max error %.2g)", maxerr);
	CHECK(fabs(sum / 1e6 - 1.0) < 1e-3, "-ln(u) draw has mean 1 (got %.6f)", sum / 1e6);
	CHECK(pt_sample_negln(0) == pt_sample_negln(1) && pt_sample_negln(0) / 65536.0 > 22.1 &&
	      pt_sample_negln(0) / 65536.0 < 22.2, "r = 0 and 1: the longest gap, 32 ln 2 = 22.18");
	CHECK(pt_sample_negln(0xffffffffu) < 2, "r = 2^32-1: a gap of ~0");
	CHECK(pt_sample_gap(1, 0xffffffffu) == 1 && pt_sample_gap(1, 0x80000000u) == 1,
	      "a gap is at least 1 byte (ceil(N * draw))");
	{
		double m = 0;
		uint64_t n = 512 * 1024;

		for (k = 0; k < 100000; k++)
			m += (double)pt_sample_gap(n, (uint32_t)(((uint64_t)k << 32) / 100000 + 21474));
		CHECK(fabs(m / 1e5 / n - 1.0) < 2e-3, "gaps for N = 512 KiB have mean N (got %.5f N)",
		      m / 1e5 / n);
	}

	/* Weights: s / (1 - exp(-s/N)) and 1 / (1 - exp(-s/N)) over sizes 1 B .. 64 N. */
	{
		static const uint64_t means[] = { 1, 4096, 8192, 65536, 524288, 1 << 20, 1ULL << 32 };
		double werr = 0, cerr = 0;

		for (unsigned m = 0; m < sizeof(means) / sizeof(means[0]); m++) {
			uint64_t n = means[m];

			for (uint64_t s = 1; s <= 64 * n && s < (1ULL << 40); s = s < 64 ? s + 1 : s + s / 7) {
				double p = -expm1(-(double)s / (double)n), wb = (double)s / p;
				__u64 gb, wc;

				pt_sample_weights(n, s, &gb, &wc);
				double gc = (double)wc / (1 << PT_SAMPLE_COUNT_SHIFT);
				/* Beyond the rounding to whole bytes / 2^-16 counts (half a unit). */
				double e1 = (fabs(gb - wb) - 0.5) / wb;
				double e2 = (fabs(gc - 1 / p) - 0.5 / 65536) * p;

				if (e1 > werr)
					werr = e1;
				if (e2 > cerr)
					cerr = e2;
			}
		}
		CHECK(werr < 1e-5, "byte weight within 1e-5 of s/(1-exp(-s/N)) (max %.2g)", werr);
		CHECK(cerr < 1e-5, "count weight within 1e-5 of 1/(1-exp(-s/N)) (max %.2g)", cerr);
		__u64 wb, wc;

		pt_sample_weights(8192, 16 * 8192, &wb, &wc);
		CHECK(wb == 16 * 8192 && wc == 1 << PT_SAMPLE_COUNT_SHIFT,
		      "from s = 16 N on, a sampled block stands for itself");
	}

	/* The countdown hits with probability 1 - exp(-s/N): s = N over 200,000 allocations.
	 * The hit count is Binomial(n, p): 5 standard deviations allowed. */
	{
		__u64 left = 0;
		long n = 200000, hits;
		double ce, p = -expm1(-1.0), sd = sqrt(n * p * (1 - p));

		run_site(4096, 4096, n, &left, &ce, &hits);
		CHECK(fabs(hits - n * p) < 5 * sd, "s = N: %ld of %ld sampled, want %.0f +- %.0f (5 sd)",
		      hits, n, n * p, 5 * sd);
	}

	/* Unbiased estimates: three interleaved sites through one thread's countdown, as in
	 * tests/workloads/wl_sample.c, repeated 200 times. The mean of 200 estimates must be
	 * within 5 standard errors of the truth: var(one run) = n s^2 (1-p)/p. */
	{
		static const uint64_t size[3] = { 48, 512, 4096 };
		static const long n[3] = { 60000, 30000, 10000 };
		double est[3] = { 0 }, cnt[3] = { 0 };
		__u64 mean = 8192, left = 0;
		int runs = 200;

		for (int r = 0; r < runs; r++) {
			for (long round = 0; round < 10000; round++) {
				for (int j = 0; j < 3; j++) {
					double c;
					long h;

					est[j] += run_site(mean, size[j], n[j] / 10000, &left, &c, &h);
					cnt[j] += c;
				}
			}
		}
		for (int j = 0; j < 3; j++) {
			double p = -expm1(-(double)size[j] / mean), truth = (double)n[j] * size[j];
			double se = sqrt(n[j] * (double)size[j] * size[j] * (1 - p) / p / runs);
			double m = est[j] / runs, c = cnt[j] / runs;

			CHECK(fabs(m - truth) < 5 * se, "site %" PRIu64 " B: mean byte estimate %.0f, truth %.0f +- %.0f (5 se)",
			      size[j], m, truth, 5 * se);
			CHECK(fabs(c - n[j]) < 5 * se / size[j], "site %" PRIu64 " B: mean count estimate %.1f, truth %ld +- %.1f",
			      size[j], c, n[j], 5 * se / size[j]);
		}
	}
	return CHECK_DONE();
}
