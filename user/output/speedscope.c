// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * speedscope.c — the speedscope file format
 * (https://www.speedscope.app/file-format-schema.json), "sampled" flavour: every stack
 * is one sample, weighted by the metric, with frames shared through shared.frames.
 *
 * speedscope keys frames by their index, so frames that read the same (same name, same
 * module) are written once; otherwise one function seen at two addresses would be split
 * in the left-heavy view.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "output/output.h"
#include "util/fmt.h"

#define SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* JSON string. Text is already clean UTF-8, so only quotes, backslashes and (defensively)
 * control characters need escapes; everything else passes through as UTF-8. */
static void json_str(FILE *f, const char *s)
{
	putc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			putc(c, f);
	}
	putc('"', f);
}

int pt_write_speedscope(FILE *f, const struct pt_profile *p, enum pt_metric m, const char *name)
{
	char **labels = NULL, *cname = NULL, *cmod;
	uint32_t *rank = NULL, *id_of_rank = NULL, *rep = NULL;
	uint32_t nranks = 0, nshared = 0, i, j, n;
	uint64_t total = 0;
	int err;

	err = pt_writer_prepare(p, m, &labels);
	if (err)
		return err;
	err = -ENOMEM;
	n = p->nframes ? p->nframes : 1;
	rank = malloc(n * sizeof(*rank));
	id_of_rank = malloc(n * sizeof(*id_of_rank));
	rep = calloc(n, sizeof(*rep));
	cname = pt_clean_text(name ? name : pt_metric_name(m));
	if (!rank || !id_of_rank || !rep || !cname)
		goto out;
	err = pt_frame_ranks(p, labels, 1, rank, &nranks);
	if (err)
		goto out;

	/* Only frames of stacks that are written get an entry, numbered in name order. */
	memset(id_of_rank, 0, n * sizeof(*id_of_rank));
	for (i = 0; i < p->nstacks; i++) {
		const struct pt_stack *s = &p->stacks[i];

		if (!s->v[m])
			continue;
		total += s->v[m];
		for (j = 0; j < s->nframes; j++) {
			id_of_rank[rank[s->frames[j]]] = 1;
			rep[rank[s->frames[j]]] = s->frames[j];
		}
	}
	for (i = 0; i < nranks; i++) {
		if (id_of_rank[i]) {
			rep[nshared] = rep[i];	/* nshared <= i: compacting in place is safe */
			id_of_rank[i] = nshared++;
		}
	}

	fprintf(f, "{\"$schema\":\"%s\",\n\"exporter\":\"peaktrace\",\n\"name\":", SCHEMA);
	json_str(f, cname);
	fputs(",\n\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[", f);
	for (i = 0; i < nshared; i++) {
		const struct pt_frame *fr = &p->frames[rep[i]];

		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		json_str(f, labels[rep[i]]);
		if (fr->module && *fr->module) {
			cmod = pt_clean_text(fr->module);
			if (!cmod)
				goto out;	/* err is still -ENOMEM */
			fputs(",\"file\":", f);
			json_str(f, cmod);
			free(cmod);
		}
		putc('}', f);
	}
	fputs("\n]},\n\"profiles\":[{\"type\":\"sampled\",\"name\":", f);
	json_str(f, cname);
	/* speedscope knows "bytes"; counts are unitless ("none"). */
	fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\n\"samples\":[",
		strcmp(pt_metric_unit(m), "bytes") ? "none" : "bytes", total);
	for (i = 0, n = 0; i < p->nstacks; i++) {
		const struct pt_stack *s = &p->stacks[i];

		if (!s->v[m])
			continue;
		fputs(n++ ? ",\n[" : "\n[", f);
		/* speedscope wants root first; frames[] is leaf first. */
		for (j = s->nframes; j-- > 0;) {
			pt_put_u64(f, id_of_rank[rank[s->frames[j]]]);
			if (j)
				putc(',', f);
		}
		putc(']', f);
	}
	fputs("\n],\n\"weights\":[", f);
	for (i = 0, n = 0; i < p->nstacks; i++) {
		if (!p->stacks[i].v[m])
			continue;
		fprintf(f, "%s%" PRIu64, n++ ? "," : "", p->stacks[i].v[m]);
	}
	fputs("]}]}\n", f);
	err = pt_stream_result(f);
out:
	free(cname);
	free(rep);
	free(id_of_rank);
	free(rank);
	pt_labels_free(labels, p->nframes);
	return err;
}
