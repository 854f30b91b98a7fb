import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyConfig } from '../../src/admin/config-file.js';
import { bwrapAvailable } from '../../src/code-interpreter/bwrap.js';
import { dialects } from '../helpers.js';
import { startEnv, type Env } from '../assistants/setup.js';
import { fakeMatplotlib, lockEntry, serveMirror, wheel } from './wheels.js';

type CodeCall = OpenAI.Beta.Threads.Runs.CodeInterpreterToolCall;

const science = bwrapAvailable() && spawnSync('/usr/bin/python3', ['-c', 'import pandas, matplotlib'], { timeout: 30_000 }).status === 0;
const python = (code: string) => `Please run this:\n\`\`\`python\n${code}\n\`\`\``;
const SLOW = 180_000;
const CSV = 'city,temp\nOslo,4\nLima,\nCairo,25\n';

/**
 * Data work as users do it, through the openai SDK: a CSV of the assistant's tool_resources read, a cleaned
 * CSV and a chart written to /mnt/data, both downloaded. With pandas and matplotlib on the bwrap executor
 * (where bubblewrap and Debian's python3-pandas are installed). On Pyodide, whose real wheels cannot be had
 * here, with the csv module and packages of a test lock file from a mirror on loopback: a cleaning helper and
 * a matplotlib-shaped package (its figures are real PNGs), loaded on first import as numpy and pandas are.
 */
describe.each(dialects())('code_interpreter data work (%s)', (dialect) => {
  let env: Env;
  let client: OpenAI;

  beforeAll(async () => {
    env = await startEnv(dialect);
    client = env.client;
  }, SLOW);
  afterAll(async () => {
    await env?.s.close();
  });

  const content = async (fileId: string) => Buffer.from(await (await client.files.content(fileId)).arrayBuffer());
  /** Asks an assistant holding the CSV to run `code`: the code call and the reply. */
  const run = async (code: (fileId: string) => string) => {
    const input = await client.files.create({ file: await toFile(Buffer.from(CSV), 'temps.csv'), purpose: 'assistants' });
    const assistant = await client.beta.assistants.create({
      model: 'gpt-4o',
      tools: [{ type: 'code_interpreter' }],
      tool_resources: { code_interpreter: { file_ids: [input.id] } },
    });
    const r = await client.beta.threads.createAndRunPoll(
      { assistant_id: assistant.id, thread: { messages: [{ role: 'user', content: python(code(input.id)) }] } },
      { pollIntervalMs: 50 },
    );
    expect(r.status).toBe('completed');
    const steps = (await client.beta.threads.runs.steps.list(r.id, { thread_id: r.thread_id })).data;
    const call = steps
      .flatMap((s) => (s.step_details.type === 'tool_calls' ? s.step_details.tool_calls : []))
      .find((c): c is CodeCall => c.type === 'code_interpreter')!;
    const reply = (await client.beta.threads.messages.list(r.thread_id, { run_id: r.id })).data[0]!;
    const logs = call.code_interpreter.outputs.flatMap((o) => (o.type === 'logs' ? [o.logs] : [])).join('');
    const images = call.code_interpreter.outputs.flatMap((o) => (o.type === 'image' ? [o.image.file_id] : []));
    const text = reply.content.find((b) => b.type === 'text');
    const links = text?.type === 'text' ? text.text.annotations.flatMap((a) => (a.type === 'file_path' ? [a] : [])) : [];
    return { logs, images, reply, links };
  };

  it.runIf(science)(
    'bwrap: pandas reads the CSV, writes a cleaned one, and a matplotlib chart comes back as an image',
    async () => {
      await applyConfig(env.s.ctx, env.s.modules, { code_interpreter: { executor: 'bwrap', pool_size: 0, memory_mb: 1024 } });
      const admin = await env.s.req('GET', '/admin/v1/code_interpreter', { key: 'admin' });
      expect(admin.body).toMatchObject({ executor: 'bwrap', packages: ['numpy', 'pandas', 'matplotlib'], package_source: null });
      const { logs, images, reply, links } = await run((id) =>
        [
          'import pandas as pd, matplotlib.pyplot as plt',
          `df = pd.read_csv('/mnt/data/${id}')`,
          "clean = df.dropna().astype({'temp': int})",
          "clean.to_csv('/mnt/data/clean.csv', index=False)",
          "clean.plot.bar(x='city', y='temp')",
          'plt.show()',
          "print(int(clean['temp'].sum()))",
        ].join('\n'),
      );
      expect(logs).toBe('29\n');
      expect(images).toHaveLength(1);
      const png = await content(images[0]!);
      expect([...png.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
      expect(reply.content[0]).toEqual({ type: 'image_file', image_file: { file_id: images[0], detail: 'auto' } });
      expect(links.map((l) => l.text)).toEqual(['sandbox:/mnt/data/clean.csv']);
      expect((await content(links[0]!.file_path.file_id)).toString()).toBe('city,temp\nOslo,4\nCairo,25\n');
    },
    SLOW,
  );

  it(
    'pyodide: the csv module does the same; a package that cannot be fetched is a clear error in the logs',
    async () => {
      await applyConfig(env.s.ctx, env.s.modules, {
        code_interpreter: { executor: 'pyodide', pool_size: 0, packages: 'http://127.0.0.1:9/' },
      });
      const admin = await env.s.req('GET', '/admin/v1/code_interpreter', { key: 'admin' });
      expect(admin.body).toMatchObject({ executor: 'pyodide', package_source: 'http://127.0.0.1:9/' });
      expect((admin.body as { packages: string[] }).packages).toEqual(expect.arrayContaining(['numpy', 'pandas', 'matplotlib']));
      const { logs, links } = await run((id) =>
        [
          'import csv',
          `rows = [r for r in csv.DictReader(open('/mnt/data/${id}')) if r['temp']]`,
          "with open('/mnt/data/clean.csv', 'w', newline='') as f:",
          "    w = csv.DictWriter(f, ['city', 'temp'], lineterminator='\\n')",
          '    w.writeheader()',
          '    w.writerows(rows)',
          "print(sum(int(r['temp']) for r in rows))",
        ].join('\n'),
      );
      expect(logs).toBe('29\n');
      expect(links.map((l) => l.text)).toEqual(['sandbox:/mnt/data/clean.csv']);
      expect((await content(links[0]!.file_path.file_id)).toString()).toBe('city,temp\nOslo,4\nCairo,25\n');
      const failed = await run(() => 'import pandas');
      expect(failed.logs).toMatch(/^ModuleNotFoundError: could not fetch package '[\w-]+' from http:\/\/127\.0\.0\.1:9\//);
    },
    SLOW,
  );

  it(
    'pyodide: packages of the distribution, loaded on first import from a mirror, clean the CSV and draw the chart',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'standin-data-work-'));
      const helper = wheel('standin-clean', {
        'standin_clean/__init__.py': 'def complete(rows, column):\n    return [r for r in rows if r[column]]\n',
      });
      writeFileSync(
        join(dir, 'pyodide-lock.json'),
        JSON.stringify({
          info: { arch: 'wasm32', python: '3.14.2' },
          packages: {
            'standin-clean': lockEntry('standin-clean', helper, ['standin_clean']),
            matplotlib: lockEntry('matplotlib', fakeMatplotlib, ['matplotlib']),
          },
        }),
      );
      const mirror = await serveMirror(new Map([helper, fakeMatplotlib].map((w) => [w.fileName, w.bytes])));
      try {
        await applyConfig(env.s.ctx, env.s.modules, {
          code_interpreter: { executor: 'pyodide', pool_size: 0, packages: mirror.url, package_lock: join(dir, 'pyodide-lock.json') },
        });
        const { logs, images, reply, links } = await run((id) =>
          [
            'import csv, standin_clean, matplotlib.pyplot as plt',
            `rows = standin_clean.complete(csv.DictReader(open('/mnt/data/${id}')), 'temp')`,
            "with open('/mnt/data/clean.csv', 'w', newline='') as f:",
            "    w = csv.DictWriter(f, ['city', 'temp'], lineterminator='\\n')",
            '    w.writeheader()',
            '    w.writerows(rows)',
            'plt.figure()',
            'plt.show()',
            "print(sum(int(r['temp']) for r in rows))",
          ].join('\n'),
        );
        expect(logs).toBe('29\n');
        expect(mirror.requests.sort()).toEqual([helper.fileName, fakeMatplotlib.fileName].sort());
        expect(images).toHaveLength(1);
        const png = await content(images[0]!);
        expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
        expect(reply.content[0]).toEqual({ type: 'image_file', image_file: { file_id: images[0], detail: 'auto' } });
        expect(links.map((l) => l.text)).toEqual(['sandbox:/mnt/data/clean.csv']);
        expect((await content(links[0]!.file_path.file_id)).toString()).toBe('city,temp\nOslo,4\nCairo,25\n');
      } finally {
        mirror.server.closeAllConnections();
        mirror.server.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
    SLOW,
  );
});
