// What a batch of log lines costs to gather and write, a line at a time in a loop, written to /dev/null:
// the request line's own shape, made as Standin makes it. Three ways of batching are compared with pino's
// destination (one blocking write a line): each line encoded into a reused buffer as it comes, the lines
// kept in an array and joined at the write, and the lines appended to one string that writeSync encodes
// in one call (src/core/log.ts). The first row is only making the lines.
// Run: node bench/log-batch.mjs
import { openSync, writeSync } from 'node:fs';
import pino from 'pino';
import { report } from './lib.mjs';

const LINES = 200_000;
const BATCH = 64 * 1024;
const fd = openSync('/dev/null', 'w');
const line = (i) =>
  `{"level":30,"time":${1764000000000 + i},"pid":4242,"hostname":"standin-1","reqId":"req_5f0c3a9e1b2d4c6f${i.toString(16).padStart(8, '0')}","method":"GET","route":"/ads/v1/ad_groups/:ad_group_id","status":200,"ms":${(i % 900) / 100},"project":null,"msg":"request"}\n`;

const ways = {
  'making the lines only': () => {
    let n = 0;
    for (let i = 0; i < LINES; i++) n += line(i).length;
    return n;
  },
  'pino destination, one write a line': () => {
    const out = pino.destination({ dest: '/dev/null', sync: true });
    for (let i = 0; i < LINES; i++) out.write(line(i));
  },
  'each line encoded into a buffer': () => {
    const batch = Buffer.allocUnsafe(BATCH);
    let used = 0;
    for (let i = 0; i < LINES; i++) {
      const l = line(i);
      if (used + l.length * 3 > BATCH) {
        writeSync(fd, batch.subarray(0, used));
        used = 0;
      }
      used += batch.write(l, used);
    }
    writeSync(fd, batch.subarray(0, used));
  },
  'lines joined at the write': () => {
    let lines = [];
    let chars = 0;
    for (let i = 0; i < LINES; i++) {
      const l = line(i);
      lines.push(l);
      chars += l.length;
      if (chars >= BATCH) {
        writeSync(fd, lines.join(''));
        lines = [];
        chars = 0;
      }
    }
    writeSync(fd, lines.join(''));
  },
  'lines appended to one string (Standin)': () => {
    let pending = '';
    for (let i = 0; i < LINES; i++) {
      pending += line(i);
      if (pending.length >= BATCH) {
        writeSync(fd, pending);
        pending = '';
      }
    }
    writeSync(fd, pending);
  },
};

const ROUNDS = 7;
const times = Object.fromEntries(Object.keys(ways).map((k) => [k, []]));
for (let r = 0; r < ROUNDS; r++)
  for (const [name, run] of Object.entries(ways)) {
    const t0 = performance.now();
    run();
    times[name].push(((performance.now() - t0) * 1000) / LINES);
  }
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(times['making the lines only']);
report(
  'log-batch',
  Object.entries(times).map(([way, t]) => ({
    way,
    'µs a line': median(t).toFixed(3),
    'µs a line past making it': (median(t) - base).toFixed(3),
  })),
  [`${LINES} lines a round, ${ROUNDS} rounds, medians; batches of ${BATCH / 1024} Ki characters to /dev/null.`],
);
