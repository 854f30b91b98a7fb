import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialects, startTestStandin, type TestStandin } from '../../test/helpers.js';
import { applyConfig, checkConfig } from '../admin/config-file.js';

const KEY = 'sk-ads-local-config-test-0000000000000';
const file = (audience: Record<string, unknown>) => ({
  organizations: [
    {
      id: 'org_cfg',
      name: 'Config test',
      ad_accounts: [
        {
          id: 'adacct_cfg',
          name: 'Config test',
          currency: 'USD',
          api_keys: [{ name: 'k', value: KEY }],
          custom_audiences: [{ id: 'aud_cfg', name: 'Buyers', status: 'ready', ...audience }],
        },
      ],
    },
  ],
});

describe.each(dialects())('ads config file: the API names (%s)', (dialect) => {
  let s: TestStandin;
  beforeAll(async () => {
    s = await startTestStandin({ dialect, seed: false });
  });
  afterAll(async () => s?.close());

  it('declares audiences with the names the API answers with', async () => {
    await applyConfig(
      s.ctx,
      s.modules,
      file({ matched_count_range: '1000-5000', eligible_for_bid_multiplier: true, eligible_for_exclusion: false }),
    );
    const r = await s.req('GET', '/ads/v1/custom_audiences/aud_cfg', { key: KEY });
    expect(r.body).toMatchObject({
      id: 'aud_cfg',
      matched_count_range: '1000-5000',
      eligible_for_bid_multiplier: true,
      eligible_for_exclusion: false,
    });
  });

  it('a config with an old name is refused with the new name', async () => {
    const problems = checkConfig(s.modules, file({ size_range: '1000-5000', bid_multiplier_eligible: true, exclusion_eligible: true }));
    const at = 'organizations[0].ad_accounts[0].custom_audiences[0]';
    expect(problems).toContain(`${at}: 'bid_multiplier_eligible' is now 'eligible_for_bid_multiplier'`);
    expect(problems).toContain(`${at}: 'size_range' is now 'matched_count_range'`);
    expect(problems).toContain(`${at}: 'exclusion_eligible' is now 'eligible_for_exclusion'`);
    await expect(applyConfig(s.ctx, s.modules, file({ bid_multiplier_eligible: true }))).rejects.toThrow(
      "'bid_multiplier_eligible' is now 'eligible_for_bid_multiplier'",
    );
  });

  it('the control plane takes the same names', async () => {
    const r = await s.req('POST', '/admin/v1/ad_accounts/adacct_cfg/custom_audiences', {
      key: 'admin',
      body: { name: 'Cart', matched_count_range: null, eligible_for_bid_multiplier: false },
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      object: 'custom_audience',
      name: 'Cart',
      matched_count_range: null,
      eligible_for_bid_multiplier: false,
      eligible_for_exclusion: true,
    });
    const old = await s.req('POST', '/admin/v1/ad_accounts/adacct_cfg/custom_audiences', {
      key: 'admin',
      body: { name: 'Cart', eligible_for_bid_multiplier: false, size_range: '1-2' },
    });
    expect([old.status, old.body.error.param]).toEqual([400, 'size_range']);
  });
});
