import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapAvailable } from '../code-interpreter/bwrap.js';
import { startTestStandin, type TestStandin } from '../../test/helpers.js';
import { createContainer, executeInContainer, getContainer, listContainerFiles, openContainerFileContent } from './service.js';

const bwrap = bwrapAvailable();
const science = bwrap && spawnSync('/usr/bin/python3', ['-c', 'import pandas, matplotlib'], { timeout: 30_000 }).status === 0;
const executors = [
  { name: 'pyodide', config: { executor: 'pyodide', pool_size: 0, packages: 'http://127.0.0.1:9/' }, run: true, science: false },
  { name: 'bwrap', config: { executor: 'bwrap', pool_size: 0 }, run: bwrap, science },
];

const text = async (s: TestStandin, containerId: string, fileId: string) => {
  const { stream } = await openContainerFileContent(s.ctx, 'proj_demo', containerId, fileId);
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

/**
 * A container is one session of the code_interpreter executor: variables and files stay between
 * executions, files the code writes become container files, deleting the container ends the session.
 * Each executor where the machine has it (bwrap: bubblewrap and /usr/bin/python3; pandas and matplotlib for the chart).
 */
describe.each(executors)('container execution ($name)', { timeout: 120_000 }, ({ config, run, science: hasScience }) => {
  let s: TestStandin;
  beforeAll(async () => {
    if (!run) return;
    s = await startTestStandin();
    expect((await s.req('POST', '/admin/v1/config', { key: 'admin', body: { code_interpreter: config } })).status).toBe(200);
  });
  afterAll(() => s?.close());

  it.runIf(run)('keeps Python state and files between calls; written files become container files', async () => {
    const c = await createContainer(s.ctx, 'proj_demo', { name: 'state' });
    const first = await executeInContainer(s.ctx, 'proj_demo', c.id, 'x = 6 * 7\nopen("/mnt/data/out.txt", "w").write(str(x))\nx');
    expect(first.result).toMatchObject({ status: 'ok', logs: '42\n' });
    expect(first.files).toMatchObject([{ path: '/mnt/data/out.txt', bytes: 2, source: 'assistant', container_id: c.id }]);
    expect((await text(s, c.id, first.files[0].id)).toString()).toBe('42');
    const second = await executeInContainer(s.ctx, 'proj_demo', c.id, 'print(x + 1, open("/mnt/data/out.txt").read())');
    expect(second.result.logs).toBe('43 42\n');
    expect(second.files).toEqual([]);
    // Rewriting a file keeps its id, with the new bytes.
    const third = await executeInContainer(s.ctx, 'proj_demo', c.id, 'open("/mnt/data/out.txt", "w").write("changed")');
    expect(third.files.map((f) => f.id)).toEqual([first.files[0].id]);
    expect((await text(s, c.id, first.files[0].id)).toString()).toBe('changed');
    const files = await listContainerFiles(s.ctx, 'proj_demo', c.id, {});
    expect(files.data.map((f) => f.path)).toEqual(['/mnt/data/out.txt']);
    // An exception is the call's result, not a failure.
    const bad = await executeInContainer(s.ctx, 'proj_demo', c.id, '1 / 0');
    expect(bad.result.status).toBe('exception');
    expect(bad.result.logs).toContain('ZeroDivisionError');
  });

  it.runIf(run)('puts the container files into a fresh session (after its delete, another container sees none of it)', async () => {
    const c = await createContainer(s.ctx, 'proj_demo', { name: 'files' });
    await executeInContainer(s.ctx, 'proj_demo', c.id, 'open("/mnt/data/a.txt", "w").write("kept")\nsecret = 1');
    // The executor's session ends (as when the pool evicts it): the files come back from the store, variables do not.
    await s.ctx.services.codeInterpreter.closeSession(c.id);
    const again = await executeInContainer(s.ctx, 'proj_demo', c.id, 'print(open("/mnt/data/a.txt").read())\nprint("secret" in globals())');
    expect(again.result.logs).toBe('kept\nFalse\n');
    const other = await createContainer(s.ctx, 'proj_demo', { name: 'other' });
    const peek = await executeInContainer(
      s.ctx,
      'proj_demo',
      other.id,
      'import os\nprint(os.path.exists("/mnt/data/a.txt"), "secret" in globals())',
    );
    expect(peek.result.logs).toBe('False False\n');
  });

  it.runIf(run)('leaves out a stored path that leaves /mnt/data (a hostile snapshot row), running the rest', async () => {
    const c = await createContainer(s.ctx, 'proj_demo', { name: 'hostile' });
    for (const [i, path] of ['/mnt/data/../../etc/evil', '/etc/passwd', '/mnt/data/ok.txt'].entries())
      await s.ctx.store.db.transaction().execute(async (tx) => {
        await tx
          .insertInto('container_files')
          .values({ id: `cfile_hostile${i}`, container_id: c.id, project_id: 'proj_demo', path, bytes: 1, source: 'user', created_at: 0 })
          .execute();
        await tx
          .insertInto('container_file_parts')
          .values({ container_file_id: `cfile_hostile${i}`, seq: 0, data: Buffer.from('x') })
          .execute();
      });
    const r = await executeInContainer(
      s.ctx,
      'proj_demo',
      c.id,
      'import os\nprint(sorted(f for f in os.listdir("/mnt/data") if not f.startswith(".")), os.path.exists("/etc/evil"))',
    );
    expect(r.result.logs).toBe("['ok.txt'] False\n");
  });

  it.runIf(run)('refuses an expired container, and marks a used one active', async () => {
    const c = await createContainer(s.ctx, 'proj_demo', { name: 'idle', expires_after: { anchor: 'last_active_at', minutes: 1 } });
    await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { duration: '50s' } });
    await executeInContainer(s.ctx, 'proj_demo', c.id, '1');
    const used = await getContainer(s.ctx, 'proj_demo', c.id);
    expect(used.last_active_at).toBeGreaterThanOrEqual(c.created_at + 50);
    await s.req('POST', '/admin/v1/clock/advance', { key: 'admin', body: { duration: '61s' } });
    await expect(executeInContainer(s.ctx, 'proj_demo', c.id, '1')).rejects.toMatchObject({ code: 'container_expired' });
  });

  it.runIf(hasScience)('computes with pandas and keeps a matplotlib chart (saved and shown) as container files', async () => {
    const c = await createContainer(s.ctx, 'proj_demo', { name: 'chart' });
    const code = [
      'import pandas as pd, matplotlib.pyplot as plt',
      'df = pd.DataFrame({"city": ["Oslo", "Lima", "Cairo"], "temp": [4, 19, 25]})',
      'print(df.temp.mean())',
      'plt.bar(df.city, df.temp)',
      'plt.savefig("/mnt/data/chart.png")',
      'plt.show()',
    ].join('\n');
    const r = await executeInContainer(s.ctx, 'proj_demo', c.id, code);
    expect(r.result.logs).toContain('16.0');
    expect(r.files.map((f) => f.path)).toEqual(['/mnt/data/chart.png']);
    expect(r.images).toHaveLength(1);
    expect(r.images[0].file.path).toBe(`/mnt/data/${r.images[0].file.id}.png`);
    const png = await text(s, c.id, r.images[0].file.id);
    expect([...png.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
  });
});
