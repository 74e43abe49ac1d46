// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// ONNX Runtime in a Node.js Lambda function (npm onnxruntime-node, under the real runtime
// interface client aws-lambda-ric 3.2.1): the story issue 21 was measured on. An LRU of 8
// InferenceSessions (intraOpNumThreads 4) over the 12 generated models of gen-models.js
// (~19 MiB of weights each); each invocation loads the requested model (evicting the least
// recently used session when 8 are open) or reuses its session, and runs one inference.
//
//   node tools/functions/onnx/gen-models.js build/onnx-models
//   lambda-host -m 1024 -t 30 --init-timeout 30 --task-root tools/functions/onnx \
//       -e ONNX_MODEL_DIR=$PWD/build/onnx-models -- \
//       tools/functions/onnx/node_modules/.bin/aws-lambda-ric index.handler
//
// Event: {"model": N} (0 <= N < the manifest's count), or {"malloc_info": true} with
// ONNX_MALLINFO set (the path of mallinfo.node): glibc's own figures, see mallocAccount. The response is the process's own account
// of the invocation, for the tests: the output's sum and first values (against the manifest's
// reference), whether the session was cached and which one was evicted, and its memory as the
// kernel sees it: VmRSS at the start and end, and VmHWM at the end after the handler reset it at
// the start (writing 5 to /proc/self/clear_refs), i.e. this invocation's peak RSS; and the CPU
// time the process spent in it (process.cpuUsage: user + system of every thread).
"use strict";

const fs = require("fs");
const path = require("path");
const ort = require("onnxruntime-node");
const { input, K } = require("./gen-models.js");

const MODEL_DIR = process.env.ONNX_MODEL_DIR || path.join(__dirname, "models");
const CACHE_SIZE = 8;
const THREADS = 4;
const manifest = JSON.parse(fs.readFileSync(path.join(MODEL_DIR, "manifest.json"), "utf8"));
const sessions = new Map();	// model id -> InferenceSession; iteration order = least recent first
const x = new ort.Tensor("float32", input(), [1, K]);
// glibc's own account of its heap (mallinfo.c, built by make lambda-onnx), when given.
const mallinfo = process.env.ONNX_MALLINFO ? require(process.env.ONNX_MALLINFO) : null;

// /proc/self/status fields in bytes.
function selfStatus() {
  const out = {};
  for (const line of fs.readFileSync("/proc/self/status", "utf8").split("\n")) {
    const m = /^(VmRSS|VmHWM|RssAnon|RssFile|Threads):\s+(\d+)/.exec(line);
    if (m) out[m[1]] = m[1] === "Threads" ? Number(m[2]) : Number(m[2]) * 1024;
  }
  return out;
}

// VmHWM := VmRSS (proc(5) clear_refs "5"); false where the kernel refuses it.
function resetPeak() {
  try {
    fs.writeFileSync("/proc/self/clear_refs", "5");
    return true;
  } catch (e) {
    return false;
  }
}

async function loadSession(id) {
  let evicted = null;
  if (sessions.size >= CACHE_SIZE) {
    const [oldest, session] = sessions.entries().next().value;
    sessions.delete(oldest);
    await session.release();
    evicted = oldest;
  }
  const session = await ort.InferenceSession.create(path.join(MODEL_DIR, manifest.models[id].file), {
    intraOpNumThreads: THREADS,
    graphOptimizationLevel: "all",
  });
  sessions.set(id, session);
  return { session, evicted };
}

async function getSession(id) {
  const session = sessions.get(id);
  if (!session) return { ...(await loadSession(id)), hit: false };
  sessions.delete(id);	// most recently used goes last
  sessions.set(id, session);
  return { session, evicted: null, hit: true };
}

async function infer(session) {
  const out = await session.run({ x });
  const y = out.y.data;
  let sum = 0;
  for (let n = 0; n < y.length; n++) sum += y[n];
  return { y_sum: sum, y_head: Array.from(y.subarray(0, 4)) };
}

// {"malloc_info": true}: no model, glibc's figures: mallinfo2() and, per arena (malloc_info's
// <heap nr="N">), its system bytes and free bytes (fast and rest).
function mallocAccount(context) {
  if (!mallinfo) throw new Error("ONNX_MALLINFO (the path of mallinfo.node) is not set");
  const xml = mallinfo.mallocInfo();
  const heaps = [];
  for (const m of xml.matchAll(/<heap nr="(\d+)">([\s\S]*?)<\/heap>/g)) {
    const num = (rx) => { const r = rx.exec(m[2]); return r ? Number(r[1]) : null; };
    heaps.push({ nr: Number(m[1]), system_current: num(/<system type="current" size="(\d+)"/),
      free_fast: num(/<total type="fast" count="\d+" size="(\d+)"/),
      free_rest: num(/<total type="rest" count="\d+" size="(\d+)"/) });
  }
  return { request_id: context.awsRequestId, mallinfo2: mallinfo.mallinfo2(), heaps };
}

exports.handler = async (event, context) => {
  if (event && event.malloc_info) return mallocAccount(context);
  const t0 = process.hrtime.bigint();
  const cpu0 = process.cpuUsage();
  const id = event && event.model !== undefined ? event.model : 0;
  if (!Number.isInteger(id) || id < 0 || id >= manifest.models.length) {
    throw new RangeError("model must be an integer between 0 and " + (manifest.models.length - 1));
  }
  const before = selfStatus();
  const reset = resetPeak();
  const { session, evicted, hit } = await getSession(id);
  const result = await infer(session);
  const after = selfStatus();
  const cpu = process.cpuUsage(cpu0);	// every thread's, ONNX Runtime's pools included
  return {
    request_id: context.awsRequestId,
    model: id,
    hit,
    evicted,
    cached: Array.from(sessions.keys()),
    ...result,
    rss_start_bytes: before.VmRSS,
    rss_end_bytes: after.VmRSS,
    rss_anon_end_bytes: after.RssAnon,
    vmhwm_bytes: reset ? after.VmHWM : null,
    vmhwm_before_reset_bytes: reset ? before.VmHWM : null,
    threads: after.Threads,
    handler_ms: Number(process.hrtime.bigint() - t0) / 1e6,
    cpu_ms: (cpu.user + cpu.system) / 1000,
  };
};
