/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mallinfo.node — glibc's own account of its heap, for the ONNX function's handler (index.js):
 * a Node-API addon (built by `make lambda-onnx` with gcc against Debian's node headers, no
 * node-gyp) exporting
 *
 *   mallocInfo()  the XML of malloc_info(0, ...): one <heap nr="N"> per arena, with its
 *                 <system type="current" size="..."/> and free chunk totals
 *   mallinfo2()   {arena, ordblks, hblks, hblkhd, uordblks, fordblks, keepcost} (bytes/counts)
 *
 * so the test can hold peaktrace's "arenas" against the process's own figures.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <node_api.h>

static napi_value malloc_info_xml(napi_env env, napi_callback_info info)
{
	char *buf = NULL;
	size_t len = 0;
	napi_value out = NULL;
	FILE *f = open_memstream(&buf, &len);

	(void)info;
	if (!f) {
		napi_throw_error(env, NULL, "open_memstream failed");
		return NULL;
	}
	if (malloc_info(0, f) != 0) {
		fclose(f);
		free(buf);
		napi_throw_error(env, NULL, "malloc_info failed");
		return NULL;
	}
	fclose(f);
	napi_create_string_utf8(env, buf, len, &out);
	free(buf);
	return out;
}

static void set_num(napi_env env, napi_value obj, const char *key, size_t v)
{
	napi_value n;

	if (napi_create_double(env, (double)v, &n) == napi_ok)
		napi_set_named_property(env, obj, key, n);
}

static napi_value mallinfo2_obj(napi_env env, napi_callback_info info)
{
	struct mallinfo2 mi = mallinfo2();
	napi_value obj;

	(void)info;
	if (napi_create_object(env, &obj) != napi_ok)
		return NULL;
	set_num(env, obj, "arena", mi.arena);
	set_num(env, obj, "ordblks", mi.ordblks);
	set_num(env, obj, "hblks", mi.hblks);
	set_num(env, obj, "hblkhd", mi.hblkhd);
	set_num(env, obj, "uordblks", mi.uordblks);
	set_num(env, obj, "fordblks", mi.fordblks);
	set_num(env, obj, "keepcost", mi.keepcost);
	return obj;
}

NAPI_MODULE_INIT()
{
	napi_property_descriptor props[] = {
		{ "mallocInfo", NULL, malloc_info_xml, NULL, NULL, NULL, napi_default, NULL },
		{ "mallinfo2", NULL, mallinfo2_obj, NULL, NULL, NULL, napi_default, NULL },
	};

	if (napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props) != napi_ok)
		return NULL;
	return exports;
}
