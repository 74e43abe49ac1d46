// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_rss: the split of the anonymous RSS into attributed bytes and named buckets
 * (user/rss/rss.c): for random figures in the BPF side's identity (peaktrace.h,
 * struct pt_rss_figures) nothing is unexplained; refaults cancel what they re-add; and
 * rss.folded sums to the anonymous RSS at the peak with the buckets as root frames. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/outdir.h"
#include "check.h"
#include "profile/profile.h"
#include "rss/rss.h"
#include "rss/rss.h"

static int64_t rnd(int64_t max)
{
	return (int64_t)(rand() % (int)(max / 4096 + 1)) * 4096;
}

/* rss[ANON] from the figures, as the kernel counter would read (peaktrace.h). */
static int64_t anon_of(const struct pt_rss_figures *f)
{
	return f->before + f->attributed + f->no_fault + f->other_task + f->table_full + f->raced -
	       f->freed_unowned - (f->reclaimed - f->refaulted) - f->pending;
}

int main(void)
{
	struct pt_rss_split s;
	struct pt_rss_figures f;
	int i, bad = 0, neg = 0;

	srand(7);
	for (i = 0; i < 20000; i++) {
		memset(&f, 0, sizeof(f));
		f.before = rnd(1 << 20);
		f.attributed = rnd(64 << 20);
		f.no_fault = rnd(8 << 20);
		f.other_task = rnd(1 << 20);
		f.table_full = rnd(1 << 16);
		f.raced = rnd(1 << 14);
		f.refaulted = rnd(1 << 16);
		f.reclaimed = rnd(1 << 16);
		f.freed_unowned = rnd(4 << 20);
		f.pending = rnd(1 << 16);
		if (anon_of(&f) < 0)
			continue;
		pt_rss_split_of(&f, anon_of(&f), &s);
		bad += s.mismatch != 0;
		neg += s.before < 0 || s.no_fault < 0 || s.other_task < 0 || s.table_full < 0;
	}
	CHECK(bad == 0, "random figures: attributed + buckets - over == anon (%d mismatches)", bad);
	CHECK(neg == 0, "random figures: no bucket negative (%d)", neg);

	/* A page freed unseen (counted freed_unowned) and faulted again while still attributed:
	 * the decrease was an attributed page's, so no bucket loses it. */
	memset(&f, 0, sizeof(f));
	f.attributed = 10 * 4096;
	f.no_fault = 3 * 4096;
	f.freed_unowned = 4096;
	f.refaulted = 4096;
	pt_rss_split_of(&f, anon_of(&f), &s);
	CHECK_EQ_U64(s.no_fault, 3 * 4096, "refault cancels freed_unowned: populated bucket kept");
	CHECK_EQ_U64(s.over, 0, "refault cancels freed_unowned: nothing over");
	CHECK_EQ_U64(s.mismatch, 0, "refault cancels freed_unowned: explained");

	/* Reclaim with the pages still attributed: the excess is `over`, not a bucket's loss. */
	memset(&f, 0, sizeof(f));
	f.attributed = 10 * 4096;
	f.before = 2 * 4096;
	f.reclaimed = 3 * 4096;
	pt_rss_split_of(&f, anon_of(&f), &s);
	CHECK_EQ_U64(s.before, 2 * 4096, "reclaim: resident-before bucket kept");
	CHECK_EQ_U64(s.over, 3 * 4096, "reclaim: over == reclaimed");
	CHECK_EQ_U64(s.unattributed, (uint64_t)(2 * 4096 - 3 * 4096), "reclaim: unattributed = anon - attributed");

	/* rss.folded: one stack of 40 KiB at the peak and the populated bucket of 8 KiB. */
	{
		static struct pt_rss rs;
		static struct pt_profile prof;
		static struct pt_global g;
		struct pt_rss_view v = { .rss = &rs, .prof = &prof, .totals = &g, .top = 10 };
		struct pt_frame fr[1] = { { .func = "touch_pages", .module = "" } };
		uint32_t frames[1] = { 0 };
		struct pt_stack st[1] = { { .nframes = 1, .frames = frames } };
		char dir[] = "/tmp/test_rss.XXXXXX", path[256], line[256];
		uint64_t total = 0, bucket = 0;
		FILE *fp;

		st[0].v[PT_RSS_PEAK_BYTES] = 10 * 4096;
		prof.frames = fr;
		prof.nframes = 1;
		prof.stacks = st;
		prof.nstacks = 1;
		rs.kernel.at_peak.attributed = 10 * 4096;
		rs.kernel.at_peak.no_fault = 2 * 4096;
		rs.kernel.at_peak.anon = 12 * 4096;
		CHECK(mkdtemp(dir) != NULL && pt_outdir_prepare(dir) == 0,
		      "temporary directory, prepared as -o's (outputs go through the held dir)");
		CHECK(pt_rss_write_files(dir, &v) == 0, "pt_rss_write_files");
		snprintf(path, sizeof(path), "%s/rss.folded", dir);
		fp = fopen(path, "r");
		while (fp && fgets(line, sizeof(line), fp)) {
			char *sp = strrchr(line, ' ');

			total += sp ? strtoull(sp + 1, NULL, 10) : 0;
			if (!strncmp(line, "[populated without a fault] ", 28))
				bucket = strtoull(line + 28, NULL, 10);
		}
		if (fp)
			fclose(fp);
		CHECK_EQ_U64(total, 12 * 4096, "rss.folded total == anon at the peak");
		CHECK_EQ_U64(bucket, 2 * 4096, "rss.folded: the bucket is a root frame of its own");
		unlink(path);
		snprintf(path, sizeof(path), "%s/rss.svg", dir);
		CHECK(access(path, R_OK) == 0, "rss.svg written");
		unlink(path);
		rmdir(dir);
	}
	return CHECK_DONE();
}
