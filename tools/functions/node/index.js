// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A Node.js handler for the real runtime interface client (npm aws-lambda-ric 3.2.1, which embeds
// aws-lambda-cpp and libcurl): the same "buffer the whole response" mistake as ../python.
//
//   lambda-host --task-root tools/functions/node -- \
//       tools/functions/node/node_modules/.bin/aws-lambda-ric index.handler
//
// Event: {"mb": N} (default 1, at most 512). Per invocation: N * 16 distinct strings of 64 Ki
// one-byte characters (N MiB) kept in an array, then joined into one N MiB string while the array
// lives (~2N MiB). V8 owns the heap, so these figures are approximate: the garbage collector
// decides when the memory goes back. The response is {"request_id", "bytes", "chunks"}.
"use strict";

const CHUNK = 64 * 1024;

exports.handler = async (event, context) => {
  const mb = event && event.mb !== undefined ? event.mb : 1;
  if (!Number.isInteger(mb) || mb < 0 || mb > 512) {
    throw new RangeError("mb must be an integer between 0 and 512");
  }
  const chunks = [];
  for (let i = 0; i < mb * 16; i++) {
    chunks.push(String.fromCharCode(97 + (i % 26)).repeat(CHUNK));
  }
  const body = chunks.join("");
  return { request_id: context.awsRequestId, bytes: body.length, chunks: chunks.length };
};
