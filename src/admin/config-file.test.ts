import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRows, dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { applyConfig, checkConfig, configSchema, readConfigFile } from './config-file.js';

describe.each(dialects())('declarative config (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect, seed: false });
  });
  afterAll(async () => s?.close());

  const counts = async () => {
    const out: Record<string, number> = {};
    for (const t of [
      'organizations',
      'projects',
      'api_keys',
      'service_accounts',
      'ad_accounts',
      'ads_api_keys',
      'campaigns',
      'custom_audiences',
      'product_feeds',
    ] as const) {
      out[t] = await countRows(s, t);
    }
    return out;
  };

  it('applies the example file, and applying it twice changes nothing', async () => {
    const config = readConfigFile('examples/standin.yaml');
    await applyConfig(s.ctx, s.modules, config);
    const first = await counts();
    expect(first).toMatchObject({
      organizations: 1,
      projects: 1,
      api_keys: 1,
      service_accounts: 1,
      ad_accounts: 1,
      ads_api_keys: 1,
      campaigns: 3,
      custom_audiences: 2,
      product_feeds: 1,
    });
    const group = await s.req('GET', '/ads/v1/campaigns/cmp_acme_sales', { key: 'sk-ads-local-acme-000000000000000000' });
    expect(group.body.product_feed_id).toBe('feed_acme_shoes');
    await applyConfig(s.ctx, s.modules, config);
    expect(await counts()).toEqual(first);
  });

  it('declared keys work, and the root ads section sets the bid table', async () => {
    const r = await s.req('POST', '/ads/v1/ad_groups', {
      key: 'sk-ads-local-acme-000000000000000000',
      body: {
        campaign_id: 'cmp_acme_reach',
        name: 'Reach all',
        status: 'active',
        bidding_config: { billing_event_type: 'impression', max_bid_micros: 50_000_001 },
      },
    });
    expect(r.status).toBe(400);
    expect(r.body.error.message).toContain('50000000');
  });

  it('refuses unknown keys and wrong types with the path', () => {
    const problems = checkConfig(s.modules, {
      organizations: [{ name: 'x', projcts: [] }],
      ads: { max_bid_micros: { USD: { clicks: 'a lot' } } },
    });
    expect(problems.join('\n')).toContain("organizations[0]: must NOT have additional properties: unknown key 'projcts'");
    expect(problems.join('\n')).toContain('ads.max_bid_micros.USD.clicks');
  });

  it('publishes the JSON Schema (docs/standin.schema.json is up to date)', async () => {
    const { readFileSync } = await import('node:fs');
    const published = JSON.parse(readFileSync('docs/standin.schema.json', 'utf8'));
    expect(published).toEqual(JSON.parse(JSON.stringify(configSchema(s.modules))));
    expect((await s.req('GET', '/config.schema.json')).body.title).toBe('Standin configuration');
  });
});
