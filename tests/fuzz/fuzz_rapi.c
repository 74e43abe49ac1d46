// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_rapi — the Runtime API classifier (bpf/rapi.h) on the bytes a runtime writes, under the
 * contract the BPF caller gives it (bpf/peaktrace.bpf.c, the write/sendto probes):
 *   - pt_rapi_classify(buf, len) with len = min(count, PT_RAPI_SCAN) in a PT_RAPI_SCAN buffer;
 *   - the same bytes as a request line reassembled from pieces: pt_rapi_classify_in(.., strict)
 *     and pt_rapi_partial (bpf/invocation.bpf.h rapi_piece);
 *   - pt_rapi_is_streaming(buf, hl) with hl = min(count, PT_RAPI_HDR_SCAN) in a buffer of
 *     PT_RAPI_HDR_SCAN + 16 bytes;
 *   - pt_rapi_chunked_end(first, min(count, 8), count >= 7 ? last7 : NULL), 3 bytes read at
 *     first and 7 at last7.
 * Each buffer is malloc'd at exactly its size and the bytes past what was written are poisoned
 * (ASan), so a read past the data or past the buffer is reported.
 */
#include <sanitizer/asan_interface.h>
#include "bpf/rapi.h"
#include "fuzz.h"

static char *exact(const uint8_t *data, size_t n, size_t bufsz, size_t valid)
{
	char *b = malloc(bufsz);

	memset(b, 0xa5, bufsz);
	memcpy(b, data, n < bufsz ? n : bufsz);
	/* What lies past the write is memory the caller may not have: never to be read. */
	if (valid < bufsz)
		ASAN_POISON_MEMORY_REGION(b + valid, bufsz - valid);
	return b;
}

static void release(char *b, size_t bufsz)
{
	ASAN_UNPOISON_MEMORY_REGION(b, bufsz);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	__u32 len = size < PT_RAPI_SCAN ? (__u32)size : PT_RAPI_SCAN, id_off, id_len;
	__u32 hl = size < PT_RAPI_HDR_SCAN ? (__u32)size : PT_RAPI_HDR_SCAN;
	char *b, *first, *last7 = NULL;
	int kind;

	b = exact(data, size, PT_RAPI_SCAN, len);
	kind = pt_rapi_classify(b, len, &id_off, &id_len);
	FUZZ_ASSERT(kind >= PT_RAPI_OTHER && kind <= PT_RAPI_INIT_ERROR);
	if (kind == PT_RAPI_RESPONSE || kind == PT_RAPI_ERROR) {
		/* The id the BPF side copies out: inside the scanned bytes, and not empty. */
		FUZZ_ASSERT(id_len > 0 && id_len <= PT_RAPI_ID_MAX);
		FUZZ_ASSERT(id_off + id_len < len);
		FUZZ_ASSERT(b[id_off + id_len] == '/');
		for (__u32 i = id_off; i < id_off + id_len; i++)
			FUZZ_ASSERT(b[i] != '/' && b[i] != ' ' && b[i] != '\r' && b[i] != '\n');
	}   /* (other kinds may leave an id behind: rapi.h promises one only for these two) */
	/* Bytes of a line written in pieces: strict classification never says more than the
	 * whole write's, and pt_rapi_partial stays in its three answers. */
	{
		int strict = pt_rapi_classify_in(b, len, &id_off, &id_len, 1), part = pt_rapi_partial(b, len);

		FUZZ_ASSERT(strict == PT_RAPI_OTHER || strict == kind);
		FUZZ_ASSERT(part >= 0 && part <= 2);
	}
	release(b, PT_RAPI_SCAN);

	b = exact(data, size, PT_RAPI_HDR_SCAN + 16, hl);
	(void)pt_rapi_is_streaming(b, hl);
	/* Callers never pass more than they read, but the function caps len itself. */
	release(b, PT_RAPI_HDR_SCAN + 16);

	first = exact(data, size, 3, size < 3 ? size : 3);
	if (size >= 7)
		last7 = exact(data + size - 7, 7, 7, 7);
	(void)pt_rapi_chunked_end(first, size < 8 ? (__u32)size : 8, last7);
	release(first, 3);
	if (last7)
		release(last7, 7);
	return 0;
}
