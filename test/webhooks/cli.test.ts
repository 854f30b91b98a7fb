import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runTriggerCli } from '../../src/webhooks/cli.js';
import { createStandin } from '../../src/server/app.js';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { startReceiver } from './receiver.js';

describe('standin trigger', () => {
  let s: TestStandin;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    s = await startTestStandin();
    rx = await startReceiver();
    await s.req('POST', '/admin/v1/projects/proj_demo/webhook_endpoints', {
      key: 'admin',
      body: { name: 'cli', url: rx.url, event_types: ['safety.deactivation_issued', 'realtime.call.incoming'] },
    });
  });
  afterAll(async () => {
    await rx?.close();
    await s?.close();
  });

  const run = async (args: string[]) => {
    let out = '';
    let err = '';
    const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => ((out += String(c)), true));
    const e = vi.spyOn(process.stderr, 'write').mockImplementation((c) => ((err += String(c)), true));
    try {
      const code = await runTriggerCli(args, { settings: s.ctx.settings, boot: createStandin });
      return { code, out, err };
    } finally {
      o.mockRestore();
      e.mockRestore();
    }
  };

  it('writes the event and its object into the store; a running Standin delivers it', async () => {
    const r = await run(['safety.deactivation_issued', '--project', 'proj_demo', '--event-data', '{"safety_identifier":"user_cli"}']);
    expect(r.code, r.err).toBe(0);
    const event = JSON.parse(r.out);
    expect(event).toMatchObject({
      object: 'event',
      type: 'safety.deactivation_issued',
      data: { id: expect.stringMatching(/^safety_case_/) },
    });
    await s.ctx.jobs.drain();
    expect(JSON.parse(rx.received.at(-1)!.body)).toEqual(event);
    const c = await s.req('GET', `/v1/safety/cases/${event.data.id}`, { key: 'platform' });
    expect(c.body).toMatchObject({ action: 'deactivation', safety_identifier: 'user_cli' });
  });

  it('takes SIP headers and drops authorization ones', async () => {
    const headers = [
      { name: 'From', value: 'a' },
      { name: 'Authorization', value: 'x' },
      { name: 'From', value: 'b' },
    ];
    const r = await run(['realtime.call.incoming', `--event-data=${JSON.stringify({ sip_headers: headers })}`]);
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out).data.sip_headers).toEqual([headers[0], headers[2]]);
  });

  it('refuses unknown types and options with exit code 2', async () => {
    expect((await run(['batch.exploded'])).code).toBe(2);
    expect((await run(['batch.completed', '--colour', 'red'])).code).toBe(2);
    expect((await run([])).code).toBe(2);
    expect((await run(['batch.completed', '--project', 'proj_nope'])).err).toMatch(/No project found/);
  });
});
