// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// js_alloc.js — a JavaScript function with a distinctive name that allocates a known amount
// through malloc, for the Node JIT test (tests/run.py, section "node").
//
//   node --perf-basic-prof js_alloc.js [--wait]
//
// peaktraceJsAllocator() makes 64 Buffers of 1 MiB (Buffer.alloc: node's ArrayBuffer
// allocator -> malloc, 64 MiB in all), held until the end. It runs once first with small
// sizes so that V8 compiles it (the baseline compiler writes it to /tmp/perf-PID.map; an
// interpreted call shows as Builtins_InterpreterEntryTrampoline). --wait: print
// "js: waiting for SIGUSR2" and start on SIGUSR2 (node keeps SIGUSR1 for its inspector).
'use strict';

function peaktraceJsAllocator(n, size) {
  const keep = [];
  for (let i = 0; i < n; i++) keep.push(Buffer.alloc(size, i & 0xff));
  return keep;
}

function main() {
  for (let i = 0; i < 50; i++) peaktraceJsAllocator(8, 64);
  const held = [];
  for (let r = 0; r < 8; r++) held.push(peaktraceJsAllocator(8, 1 << 20));
  let sum = 0;
  for (const k of held) sum += k.length;
  process.stdout.write('js: done ' + sum + '\n');
}

if (process.argv.includes('--wait')) {
  const t = setInterval(() => {}, 1000);
  process.on('SIGUSR2', () => { clearInterval(t); main(); });
  process.stdout.write('js: waiting for SIGUSR2\n');
} else {
  main();
}
