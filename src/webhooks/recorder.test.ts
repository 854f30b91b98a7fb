import { describe, expect, it } from 'vitest';
import { dialects, startTestStandin } from '../../test/helpers.js';
import { createRecorder, type AttemptRecord } from './recorder.js';

describe.each(dialects())('attempt recorder (%s)', (dialect) => {
  it('commits records arriving together; a bad one fails alone', async () => {
    const s = await startTestStandin({ dialect });
    try {
      const db = s.ctx.store.db;
      await db
        .insertInto('webhook_endpoints')
        .values({
          id: 'whep_r',
          project_id: 'proj_demo',
          name: 'r',
          url: 'http://x',
          event_types: '[]',
          enabled: 1,
          secret: 's',
          previous_secret: null,
          previous_secret_expires_at: null,
          created_at: 1,
          updated_at: 1,
        })
        .execute();
      const base = {
        project_id: 'proj_demo',
        endpoint_id: 'whep_r',
        event_id: 'evt_r',
        event_type: 'batch.completed',
        status: 'pending',
        attempt_count: 0,
        created_at: 1,
        next_attempt_at: 1,
        last_attempt_at: null,
        last_status_code: null,
        completed_at: null,
      };
      await db
        .insertInto('webhook_deliveries')
        .values({ ...base, id: 'whdel_old' })
        .execute();
      const rec = (deliveryId: string, extra: Partial<AttemptRecord> = {}): AttemptRecord => ({
        attempt: {
          id: `whatt_${deliveryId}`,
          delivery_id: deliveryId,
          attempt: 1,
          started_at: 2,
          duration_us: 5,
          status_code: 200,
          ok: 1,
          error: null,
          response_excerpt: 'ok',
          response_truncated: 0,
        },
        delivery: {
          id: deliveryId,
          status: 'succeeded',
          attempt_count: 1,
          last_attempt_at: 2,
          last_status_code: 200,
          next_attempt_at: null,
          completed_at: 3,
        },
        ...extra,
      });
      const recorder = createRecorder(s.ctx);
      const results = await Promise.allSettled([
        recorder.record(rec('whdel_old')),
        recorder.record(
          rec('whdel_new', {
            create: { ...base, id: 'whdel_new' },
            retry: { kind: 'webhook.deliver', deliveryId: 'whdel_new', runAt: 99, jobId: 'job_whdel_new_1' },
          }),
        ),
        recorder.record(rec('whdel_missing')), // no such delivery: the attempt's foreign key fails
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
      const rows = await db
        .selectFrom('webhook_deliveries')
        .select(['id', 'status', 'attempt_count', 'completed_at'])
        .orderBy('id')
        .execute();
      expect(rows.map((r) => ({ ...r, completed_at: Number(r.completed_at) }))).toEqual([
        { id: 'whdel_new', status: 'succeeded', attempt_count: 1, completed_at: 3 },
        { id: 'whdel_old', status: 'succeeded', attempt_count: 1, completed_at: 3 },
      ]);
      expect((await db.selectFrom('webhook_attempts').select('id').orderBy('id').execute()).map((r) => r.id)).toEqual([
        'whatt_whdel_new',
        'whatt_whdel_old',
      ]);
      expect(await db.selectFrom('jobs').select('id').where('id', '=', 'job_whdel_new_1').execute()).toHaveLength(1);
    } finally {
      await s.close();
    }
  });
});
