// Two functions doing 3:1 work, for `node --cpu-prof` (tests/e2e/test_cpuprofile.py). Each round calls heavy (three
// units of work) and light (one), and the program reports the wall time it spent in each, as V8's sampler sees
// time: {"heavy_ms": ..., "light_ms": ...} on stdout.
'use strict';
const { performance } = require('perf_hooks');

function work(units) {
  let x = 0;
  for (let i = 0; i < units * 200000; i++) x = (x * 1103515245 + 12345 + i) % 2147483647;
  return x;
}

function heavy() { return work(3); }
function light() { return work(1); }

const seconds = Number(process.argv[2] || '0.6');
const t = { heavy: 0, light: 0 };
let sink = 0;
const end = performance.now() + seconds * 1000;
while (performance.now() < end) {
  let a = performance.now();
  sink ^= heavy();
  let b = performance.now();
  sink ^= light();
  let c = performance.now();
  t.heavy += b - a;
  t.light += c - b;
}
process.stdout.write(JSON.stringify({ heavy_ms: t.heavy, light_ms: t.light, sink: sink & 1 }) + '\n');
