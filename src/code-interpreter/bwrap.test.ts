import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapAvailable } from './bwrap.js';
import { createCodeInterpreter, type CodeInterpreterRuntime } from './service.js';

const available = bwrapAvailable();
const hasScience = available && spawnSync('/usr/bin/python3', ['-c', 'import pandas, matplotlib'], { timeout: 30_000 }).status === 0;

/**
 * The bwrap executor: Debian's python3 in a bubblewrap sandbox. Skipped where bubblewrap or python3 is
 * missing (.ci/run installs bubblewrap, python3-pandas and python3-matplotlib).
 */
describe.runIf(available)('code interpreter (bwrap)', { timeout: 60_000 }, () => {
  let ci: CodeInterpreterRuntime;
  beforeAll(() => {
    ci = createCodeInterpreter(() => 0, console, { executor: 'bwrap', pool_size: 0, memory_mb: 1024, output_limit_bytes: 4096 });
  });
  afterAll(async () => {
    await ci?.close();
  });

  it('computes, keeps variables between calls, and reports exceptions as results', async () => {
    expect(await ci.execute({ session: 's', code: 'x = sum(i * i for i in range(1000))\nx' })).toMatchObject({
      status: 'ok',
      logs: '332833500\n',
    });
    expect(await ci.execute({ session: 's', code: 'x + 1' })).toMatchObject({ status: 'ok', logs: '332833501\n' });
    const r = await ci.execute({ session: 's', code: 'def f():\n    return 1 / 0\nf()' });
    expect(r.status).toBe('exception');
    expect(r.logs).toContain('ZeroDivisionError: division by zero');
  });

  it.runIf(hasScience)('reads a CSV with pandas, writes one back, and shows a matplotlib figure as a PNG image', async () => {
    const csv = new TextEncoder().encode('city,temp\nOslo,4\nLima,19\nCairo,25\n');
    const code = [
      'import pandas as pd, matplotlib.pyplot as plt',
      'df = pd.read_csv("/mnt/data/temps.csv")',
      'df[df.temp > 10].to_csv("/mnt/data/hot.csv", index=False)',
      'plt.bar(df.city, df.temp)',
      'plt.show()',
      'int(df.temp.sum())',
    ].join('\n');
    const r = await ci.execute({ session: 's', code, files: [{ path: '/mnt/data/temps.csv', bytes: csv }] });
    expect(r).toMatchObject({ status: 'ok', logs: '48\n' });
    expect(r.files.map((f) => [f.path, Buffer.from(f.bytes).toString()])).toEqual([
      ['/mnt/data/hot.csv', 'city,temp\nLima,19\nCairo,25\n'],
    ]);
    expect(r.images).toHaveLength(1);
    expect([...r.images[0]!.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });

  it('sees no host files, no environment and no network', async () => {
    for (const code of [
      'open("/etc/passwd").read()',
      'import os\nos.listdir("/home")',
      'import os\nassert not os.environ, dict(os.environ)\nraise RuntimeError("empty")',
      'import socket\nsocket.create_connection(("127.0.0.1", 5432), timeout=3)',
      'import urllib.request\nurllib.request.urlopen("http://example.com", timeout=3)',
    ]) {
      const r = await ci.execute({ session: 'esc', code });
      expect(r.status, r.logs).toBe('exception');
      expect(r.logs).not.toMatch(/root:|PATH=|STANDIN_/);
    }
  });

  it('stops a loop at the time limit (session kept), a memory bomb at the memory limit, and an output flood', async () => {
    const loop = await ci.execute({ session: 's', code: 'while True:\n    pass', timeoutMs: 1000 });
    expect(loop.status).toBe('timeout');
    expect(loop.logs).toContain('[execution stopped: the time limit was reached]');
    const bomb = await ci.execute({ session: 's', code: 'hoard = []\nwhile True:\n    hoard.append(bytearray(10**7))' });
    expect(bomb.status).toBe('memory');
    const flood = await ci.execute({ session: 's', code: 'del hoard\nwhile True:\n    print("z" * 100)' });
    expect(flood.status).toBe('exception');
    expect(flood.logs).toContain('[output truncated: the logs are limited to 4096 bytes]');
    expect((await ci.execute({ session: 's', code: 'x > 0' })).logs).toBe('True\n');
  });
});
