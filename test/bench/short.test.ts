import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureBuilt, root } from '../process.js';

// The short form of the request-path benches (bench/short.mjs): ads CPU per request and share of a bare
// Fastify route, runs create → completed and the first streamed event, cold start against a bare start,
// printed beside the committed figures (bench/expected.json, docs/operations.md "Where a request's time
// goes") with every figure more than the stated margin worse named. A report in the log: timing on a shared
// machine never fails the build. It fails only when the bench cannot run (a request errs, Standin breaks).
// Linux only: CPU time is read from /proc. STANDIN_SKIP_BENCH=1 leaves it out.
const runs = existsSync('/proc/self/stat') && !process.env.STANDIN_SKIP_BENCH;

describe.runIf(runs)('short bench (report only)', () => {
  it('prints the request path figures beside the committed ones', () => {
    ensureBuilt();
    const out = execFileSync(process.execPath, [join(root, 'bench/short.mjs')], {
      cwd: root,
      encoding: 'utf8',
      timeout: 90_000,
      env: { ...process.env, STANDIN_LOG_LEVEL: 'error' },
    });
    console.log(out);
    expect(out).toContain('### short bench');
    // Every request of the bench answered (an error is a broken path, not a slow one).
    expect(out).not.toMatch(/\| errors \| [1-9]/);
  }, 120_000);
});
