// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// js_reuse.js — code space reused, for the Node JIT naming test (tests/sections/node.py,
// "node/jit newest names"): run with --perf-basic-prof --interpreted-frames-native-stack
// --expose-gc.
//
// First ROUNDS x 200 short-lived functions are compiled (new Function), run until V8 compiles
// them, and dropped, with a GC after each round: V8 frees their code and compiles later code
// at the same addresses, so /tmp/perf-PID.map holds many lines covering one address, the newest
// describing the code there now. Then peaktraceAfterReuse(), compiled last, makes 64 Buffers of
// 1 MiB (malloc) and holds them to the end.
'use strict';

const ROUNDS = 15;

function churn() {
  let sink = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < 200; i++) {
      const f = new Function('x', 'let a = 0; for (let k = 0; k < x; k++) a += k * ' +
                             (round * 1000 + i) + '; return a;');
      for (let j = 0; j < 30; j++) sink += f(20);
    }
    if (global.gc) global.gc();
  }
  return sink;
}

function peaktraceAfterReuse(n, size) {
  const keep = [];
  for (let i = 0; i < n; i++) keep.push(Buffer.alloc(size, i & 0xff));
  return keep;
}

churn();
for (let i = 0; i < 50; i++) peaktraceAfterReuse(8, 64);
const held = [];
for (let r = 0; r < 8; r++) held.push(peaktraceAfterReuse(8, 1 << 20));
process.stdout.write('js: done ' + held.length + '\n');
