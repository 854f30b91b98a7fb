import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleChild } from '../process.js';

/** The batched log destination of a served instance: lines wait for the end of the turn, and an end of the process loses none. */
describe('batched log destination', () => {
  let child: string;
  beforeAll(async () => {
    child = await bundleChild('test/metrics/log-child.ts');
  });

  it.each([
    ['throw', 1],
    ['reject', 1],
    ['exit', 3],
    ['return', 0],
  ])('writes every pending line when the process ends by %s', (end, code) => {
    const r = spawnSync(process.execPath, [child, end], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
    expect(r.status).toBe(code);
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(lines).toHaveLength(2000);
    expect(lines.map((l) => (JSON.parse(l) as { n: number }).n)).toEqual([...Array(2000).keys()]);
    if (end === 'throw') expect(r.stderr).toContain('crash on purpose');
  });
});
