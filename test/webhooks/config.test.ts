import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../src/webhooks/signing.js';
import { startTestStandin, type TestStandin } from '../helpers.js';
import { startReceiver } from './receiver.js';

describe('config file section `webhooks`', () => {
  let s: TestStandin;
  let rx: Awaited<ReturnType<typeof startReceiver>>;
  const secret = newWebhookSecret();
  beforeAll(async () => {
    s = await startTestStandin();
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx?.close();
    await s?.close();
  });

  const config = (event_types: string[]) => ({
    organizations: [
      {
        id: 'org_demo',
        name: 'Demo organization',
        projects: [{ id: 'proj_demo', name: 'Demo project', webhooks: [{ name: 'legacy', url: rx.url, event_types, secret }] }],
      },
    ],
  });

  it('declares endpoints (keeping an existing live.call.incoming subscription), idempotently', async () => {
    const org = (await s.req('GET', '/admin/v1/organizations/org_demo', { key: 'admin' })).body;
    const project = (await s.req('GET', '/admin/v1/projects/proj_demo', { key: 'admin' })).body;
    const doc = config(['live.call.incoming', 'live.transport.incoming']);
    doc.organizations[0].name = org.name;
    doc.organizations[0].projects[0].name = project.name;
    for (let i = 0; i < 2; i++) expect((await s.req('POST', '/admin/v1/config', { key: 'admin', body: doc })).status).toBe(200);
    const list = (await s.req('GET', '/admin/v1/projects/proj_demo/webhook_endpoints', { key: 'admin' })).body.data;
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      name: 'legacy',
      event_types: ['live.call.incoming', 'live.transport.incoming'],
      secret_hint: `whsec_…${secret.slice(-4)}`,
    });
    // The existing subscription keeps receiving the deprecated event, signed with the declared secret.
    await s.req('POST', '/admin/v1/projects/proj_demo/events', { key: 'admin', body: { type: 'live.call.incoming' } });
    await s.ctx.jobs.drain();
    const event = new Webhook(secret).verify(rx.received[0].body, rx.received[0].headers as Record<string, string>) as any;
    expect(event).toMatchObject({
      type: 'live.call.incoming',
      data: { session_id: expect.stringMatching(/^live_/), sip_headers: expect.any(Array) },
    });
    expect(event.data.type).toBeUndefined();
    // It may be kept through updates but not added again once removed.
    const id = list[0].id;
    expect(
      (
        await s.req('POST', `/admin/v1/projects/proj_demo/webhook_endpoints/${id}`, {
          key: 'admin',
          body: { name: 'renamed', event_types: ['live.call.incoming'] },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await s.req('POST', `/admin/v1/projects/proj_demo/webhook_endpoints/${id}`, {
          key: 'admin',
          body: { event_types: ['live.transport.incoming'] },
        })
      ).status,
    ).toBe(200);
    const again = await s.req('POST', `/admin/v1/projects/proj_demo/webhook_endpoints/${id}`, {
      key: 'admin',
      body: { event_types: ['live.call.incoming'] },
    });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe('deprecated_event_type');
  });

  it('refuses an invalid section', async () => {
    const bad = config(['batch.exploded']);
    const r = await s.req('POST', '/admin/v1/config', { key: 'admin', body: bad });
    expect(r.status).toBe(400);
  });
});
