import type { Kysely, Migration } from 'kysely';

export interface AdsTables {
  ad_accounts: { id: string; organization_id: string; name: string; currency: string; created_at: number };
  ads_api_keys: { id: string; ad_account_id: string; name: string; hash: string; redacted: string; created_at: number };
  campaigns: {
    id: string;
    ad_account_id: string;
    name: string;
    /** `impressions`, `clicks` or `conversions` (oCPC). */
    bidding_type: string;
    product_feed_id: string | null;
    created_at: number;
  };
  product_feeds: { id: string; ad_account_id: string; name: string; created_at: number };
  custom_audiences: {
    id: string;
    ad_account_id: string;
    name: string;
    status: string;
    /** Matched-count range text, e.g. `1000-5000`. */
    size_range: string | null;
    /** Its own attribute: never inferred from status or size. */
    bid_multiplier_eligible: number;
    exclusion_eligible: number;
    created_at: number;
  };
  ad_groups: {
    id: string;
    ad_account_id: string;
    campaign_id: string;
    name: string;
    description: string | null;
    context_hints: string;
    status: string;
    bidding_config: string;
    product_set: string | null;
    created_at: number;
    updated_at: number;
    /** The ad group as the API answers it (ads/documents.ts), written with every change. */
    json: string;
  };
}

export const adsMigrations: Record<string, Migration> = {
  '202611220020_ads_init': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('ad_accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('currency', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('ads_api_keys')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('ad_account_id', 'text', (c) => c.notNull().references('ad_accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('redacted', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('product_feeds')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('ad_account_id', 'text', (c) => c.notNull().references('ad_accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('campaigns')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('ad_account_id', 'text', (c) => c.notNull().references('ad_accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('bidding_type', 'text', (c) => c.notNull())
        .addColumn('product_feed_id', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('custom_audiences')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('ad_account_id', 'text', (c) => c.notNull().references('ad_accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('size_range', 'text')
        .addColumn('bid_multiplier_eligible', 'integer', (c) => c.notNull())
        .addColumn('exclusion_eligible', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('ad_groups')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('ad_account_id', 'text', (c) => c.notNull().references('ad_accounts.id').onDelete('cascade'))
        .addColumn('campaign_id', 'text', (c) => c.notNull().references('campaigns.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('context_hints', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('bidding_config', 'text', (c) => c.notNull())
        .addColumn('product_set', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ad_groups_campaign').on('ad_groups').columns(['campaign_id', 'id']).execute();
    },
  },
  '202611221100_ad_groups_json': {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('ad_groups').addColumn('json', 'text').execute();
      const rows = (await db.selectFrom('ad_groups').selectAll().execute()) as AdGroupRowV1[];
      for (const row of rows)
        await db
          .updateTable('ad_groups')
          .set({ json: adGroupJsonV1(row) })
          .where('id', '=', row.id)
          .execute();
    },
  },
};

/** An ad group row as `202611220020_ads_init` made it. */
interface AdGroupRowV1 {
  id: string;
  name: string;
  description: string | null;
  context_hints: string;
  status: string;
  bidding_config: string;
  product_set: string | null;
  created_at: number;
  updated_at: number;
}

/**
 * The document as rendered when `202611221100_ad_groups_json` was released. A migration is frozen: it
 * keeps its own copy rather than the live renderer (`documents.ts`), which may change.
 */
function adGroupJsonV1(row: AdGroupRowV1): string {
  return (
    `{"id":${JSON.stringify(row.id)},"created_at":${row.created_at},"updated_at":${row.updated_at},"name":${JSON.stringify(row.name)},` +
    `"description":${JSON.stringify(row.description)},"context_hints":${row.context_hints},"status":${JSON.stringify(row.status)},` +
    `"bidding_config":${row.bidding_config}${row.product_set !== null ? `,"product_set":${row.product_set}` : ''}}`
  );
}

declare module '../store/schema.js' {
  interface DB extends AdsTables {}
}
