// Snapshots: `standin export` and `standin import` of a store of 10,000 ad groups, 1,000 messages and 100
// files (SQLite), against the same run's baseline: `tar czf` / `tar xzf` of the stopped data folder (a copy
// of the raw store, which no other store can read), and the start of a command alone (`standin migrate`).
// Run: npm run build && node bench/snapshot.mjs
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AD_GROUP_BODY, report, startStandin } from './lib.mjs';

const AD_GROUPS = Number(process.env.BENCH_AD_GROUPS ?? 10_000);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1_000);
const FILES = Number(process.env.BENCH_FILES ?? 100);
const FILE_BYTES = 64 * 1024;

const work = mkdtempSync(join(tmpdir(), 'standin-bench-snapshot-'));
const data = join(work, 'data');

/** Runs `fn` on `n` items, `width` at a time. */
async function pool(n, width, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let i = next++; i < n; i = next++) await fn(i);
    }),
  );
}

async function call(url, key, method, path, body, headers = { 'content-type': 'application/json' }) {
  const res = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${key}`, ...headers }, body });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

// The store, made through the API.
const s = await startStandin({ data });
await pool(AD_GROUPS, 16, () => call(s.url, s.keys.ads, 'POST', '/ads/v1/ad_groups', AD_GROUP_BODY));
const thread = await call(s.url, s.keys.platform, 'POST', '/v1/threads', '{}', {
  'content-type': 'application/json',
  'openai-beta': 'assistants=v2',
});
await pool(MESSAGES, 16, (i) =>
  call(
    s.url,
    s.keys.platform,
    'POST',
    `/v1/threads/${thread.id}/messages`,
    JSON.stringify({ role: 'user', content: `message ${i} `.repeat(20) }),
    {
      'content-type': 'application/json',
      'openai-beta': 'assistants=v2',
    },
  ),
);
await pool(FILES, 8, async (i) => {
  const form = new FormData();
  form.append('purpose', 'assistants');
  // Random bytes: files compress no better in a snapshot than in a tarball.
  form.append('file', new Blob([randomBytes(FILE_BYTES)]), `f${i}.bin`);
  const res = await fetch(`${s.url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${s.keys.platform}` }, body: form });
  if (res.status !== 200) throw new Error(`upload: ${res.status} ${await res.text()}`);
});
await s.stop();

const printed = [];
/** The best of three runs, ms: the machine is shared, and the fastest run is the one least disturbed. */
const timed = (cmd, args) => {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    const out = execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, STANDIN_LOG_LEVEL: 'error' } });
    best = Math.min(best, performance.now() - t0);
    if (i === 0 && String(out).trim()) printed.push(String(out).trim());
  }
  return best;
};
const standin = (...args) => timed(process.execPath, ['dist/main.js', ...args, '--data', data]);
const mb = (path) => Math.round(statSync(path).size / 1e4) / 100;

const snapshot = join(work, 'state.jsonl.gz');
const tarball = join(work, 'data.tar.gz');
const start = standin('migrate');
const exportMs = standin('export', snapshot);
const importMs = standin('import', snapshot);
const tarMs = timed('tar', ['czf', tarball, '-C', work, 'data']);
const untarDir = join(work, 'untar');
execFileSync('mkdir', ['-p', untarDir]);
const untarMs = timed('tar', ['xzf', tarball, '-C', untarDir]);
// The import replaced the state with the snapshot's: a second export must hold the same rows and files.
const again = join(work, 'again.jsonl.gz');
standin('export', again);
const round = (x) => Math.round(x);

report(
  'snapshot',
  [
    { what: 'standin export (whole command)', ms: round(exportMs), 'size MB': mb(snapshot) },
    { what: 'standin import (whole command)', ms: round(importMs), 'size MB': mb(snapshot) },
    { what: 'baseline: tar czf of the stopped data folder', ms: round(tarMs), 'size MB': mb(tarball) },
    { what: 'baseline: tar xzf of it', ms: round(untarMs), 'size MB': mb(tarball) },
    { what: 'baseline: a command that only starts (standin migrate)', ms: round(start), 'size MB': '' },
  ],
  [
    `Store: ${AD_GROUPS} ad groups, ${MESSAGES} messages, ${FILES} files of ${FILE_BYTES / 1024} KiB (SQLite, data folder).`,
    ...printed.filter((l) => l.startsWith('exported') || l.startsWith('imported')),
    'The snapshot is portable (either store imports it) and is checked whole before the import changes anything; the tarball is a raw copy.',
  ],
);
rmSync(work, { recursive: true, force: true });
