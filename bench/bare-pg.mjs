// The bare one-query-per-request Fastify route on PostgreSQL: the baseline of the PostgreSQL benchmarks.
import { spawn } from 'node:child_process';

/** The bare one-query-per-request route on PostgreSQL (its own process). */
export function startBarePg(url, row) {
  const code = `
    const fastify = require('fastify')({ logger: false });
    const pg = require('pg');
    const { randomBytes } = require('node:crypto');
    const pool = new pg.Pool({ connectionString: ${JSON.stringify(url)}, max: 10 });
    const row = ${JSON.stringify(row)};
    fastify.get('/one/:id', async (req, reply) => {
      const { rows } = await pool.query({ name: 'one', text: 'select json from ad_groups where id = $1', values: [req.params.id] });
      return reply.type('application/json; charset=utf-8').send(rows[0].json);
    });
    fastify.get('/page', async (req, reply) => {
      const { rows } = await pool.query({
        name: 'page',
        text: 'select json from ad_groups where ad_account_id = $1 and campaign_id = $2 order by id desc limit 21',
        values: [row.ad_account_id, row.campaign_id],
      });
      const page = rows.slice(0, 20).map((r) => r.json);
      const id = (j) => j.slice(6, j.indexOf('"', 7) + 1);
      return reply.type('application/json; charset=utf-8').send('{"object":"list","data":[' + page.join(',') + '],"first_id":' + id(page[0]) + ',"last_id":' + id(page[page.length - 1]) + ',"has_more":' + (rows.length > 20) + '}');
    });
    fastify.post('/create', async (req, reply) => {
      const b = req.body;
      const now = Math.floor(Date.now() / 1000);
      const id = 'adgrp_' + randomBytes(12).toString('hex');
      const json = JSON.stringify({ id, created_at: now, updated_at: now, name: b.name, description: null, context_hints: [], status: b.status, bidding_config: b.bidding_config });
      await pool.query({
        name: 'create',
        text: 'insert into ad_groups (id, ad_account_id, campaign_id, name, description, context_hints, status, bidding_config, product_set, created_at, updated_at, json) values ($1, $2, $3, $4, null, $5, $6, $7, null, $8, $8, $9)',
        values: [id, row.ad_account_id, b.campaign_id, b.name, '[]', b.status, JSON.stringify(b.bidding_config), now, json],
      });
      return reply.type('application/json; charset=utf-8').send(json);
    });
    fastify.listen({ port: 0, host: '127.0.0.1' }).then((a) => console.log('LISTEN ' + a));
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (d) => {
      const m = /LISTEN (\S+)/.exec(String(d));
      if (m) resolve({ child, url: m[1], stop: () => new Promise((r) => (child.once('exit', r), child.kill('SIGTERM'))) });
    });
    child.on('exit', (c) => reject(new Error(`bare pg route exited with ${c}`)));
  });
}
