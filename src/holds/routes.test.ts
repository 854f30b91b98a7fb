import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { applyConfig } from '../admin/config-file.js';
import { workHolds } from './service.js';

describe.each(dialects())('work holds (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
  });
  afterAll(async () => s?.close());

  it('sets, reads and releases a project’s holds; what a PUT leaves out runs', async () => {
    const path = '/admin/v1/projects/proj_demo/work_holds';
    expect((await s.req('GET', path, { key: 'admin' })).body).toEqual({
      object: 'project.work_holds',
      project_id: 'proj_demo',
      batch_hold_at: [],
      batch_pace: {},
      ingestion: 'run',
    });
    const put = await s.req('PUT', path, { key: 'admin', body: { batch_hold_at: ['cancelling'], batch_pace: { in_progress: '1h30m' } } });
    expect(put.body).toMatchObject({ batch_hold_at: ['cancelling'], batch_pace: { in_progress: '1h30m' }, ingestion: 'run' });
    expect(await workHolds(s.ctx, 'proj_demo')).toEqual({
      batchHoldAt: ['cancelling'],
      batchPaceMs: { in_progress: 5_400_000 },
      ingestionHeld: false,
    });
    await s.req('PUT', path, { key: 'admin', body: { ingestion: 'hold' } });
    expect(await workHolds(s.ctx, 'proj_demo')).toEqual({ batchHoldAt: [], batchPaceMs: {}, ingestionHeld: true });
    expect((await s.req('DELETE', path, { key: 'admin' })).body.ingestion).toBe('run');
    expect((await workHolds(s.ctx, 'proj_demo')).ingestionHeld).toBe(false);
  });

  it('takes the same shape from the config file (a project’s work_holds)', async () => {
    await applyConfig(s.ctx, s.modules, {
      organizations: [
        {
          id: 'org_demo',
          name: 'Demo',
          projects: [{ id: 'proj_demo', name: 'Demo', work_holds: { batch_hold_at: ['validating'], ingestion: 'hold' } }],
        },
      ],
    });
    expect(await workHolds(s.ctx, 'proj_demo')).toEqual({ batchHoldAt: ['validating'], batchPaceMs: {}, ingestionHeld: true });
    await s.req('DELETE', '/admin/v1/projects/proj_demo/work_holds', { key: 'admin' });
  });
});
