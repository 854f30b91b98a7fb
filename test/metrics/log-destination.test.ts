import { spawn, spawnSync } from 'node:child_process';
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

  it('writes lines of any size and of multi-byte characters whole and in order', () => {
    const r = spawnSync(process.execPath, [child, 'mixed'], { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
    expect(r.status).toBe(0);
    const lines = r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { n: number; text: string });
    expect(lines.map((l) => l.n)).toEqual([...Array(3000).keys()]);
    expect(lines[1500].text).toBe('é🦊'.repeat(60_000));
    expect(lines[7].text).toBe('€'.repeat(7));
  });

  it('keeps what a full pipe refuses and writes it first, in order, when the reader is behind', async () => {
    const proc = spawn(process.execPath, [child, 'behind'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    // Nothing is read for a while: the pipe fills and the writes are refused (EAGAIN).
    proc.stdout.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const chunks: Buffer[] = [];
    proc.stdout.on('data', (d: Buffer) => chunks.push(d));
    proc.stdout.resume();
    await new Promise((resolve) => proc.stdout.once('end', resolve));
    expect(await exited).toBe(0);
    const lines = Buffer.concat(chunks)
      .toString()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { n: number; pad: string });
    expect(lines.map((l) => l.n)).toEqual([...Array(20_000).keys()]);
    expect(lines.every((l) => l.pad === 'é🦊€x'.repeat(40))).toBe(true);
  });
});
