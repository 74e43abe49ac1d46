// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// js_objects.js — a JavaScript function that fills the V8 heap (mmap'd pages, never malloc)
// with a million small objects, for the RSS-by-page Node test (tests/run.py, section "node").
//
//   node --perf-basic-prof --interpreted-frames-native-stack js_objects.js [--wait]
//
// fillObjects() pushes 1,000,000 objects {a, b, s} into one array, held until the end. The
// script measures its own growth: process.memoryUsage().rss before and after the fill, printed
// as "js: rss_before N" / "js: rss_after N" (bytes). --wait: print "js: waiting for SIGUSR2" and
// start on SIGUSR2 (node keeps SIGUSR1 for its inspector).
'use strict';

const N = 1000000;

function fillObjects(n) {
  const keep = [];
  for (let i = 0; i < n; i++) keep.push({ a: i, b: i * 2, s: 'o' + (i & 1023) });
  return keep;
}

function main() {
  const before = process.memoryUsage().rss;
  const held = fillObjects(N);
  const after = process.memoryUsage().rss;
  process.stdout.write('js: rss_before ' + before + '\njs: rss_after ' + after + '\n');
  process.stdout.write('js: done ' + held.length + '\n');
}

if (process.argv.includes('--wait')) {
  const t = setInterval(() => {}, 1000);
  process.on('SIGUSR2', () => { clearInterval(t); main(); });
  process.stdout.write('js: waiting for SIGUSR2\n');
} else {
  main();
}
