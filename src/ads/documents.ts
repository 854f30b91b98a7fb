import type { RawBuilder } from 'kysely';
import type { Dialect } from '../store/db.js';
import { jsonNumber, jsonObject, jsonRaw, jsonString } from '../store/json-text.js';
import type { AdGroupRow } from './store.js';

/**
 * The ad group object as JSON text, the way the ads API answers. Reads let the database render it
 * (`adGroupJsonSql`), writes render the row they hold (`adGroupJson`); both splice the stored JSON columns
 * in as they are, and a test holds the two renderings to the same output. Field order is the spec's.
 * `product_set` appears only when the ad group has one.
 */
export function adGroupJsonSql(dialect: Dialect): RawBuilder<string> {
  return jsonObject([
    { key: 'id', value: jsonString(dialect, 'id') },
    { key: 'created_at', value: jsonNumber('created_at') },
    { key: 'updated_at', value: jsonNumber('updated_at') },
    { key: 'name', value: jsonString(dialect, 'name') },
    { key: 'description', value: jsonString(dialect, 'description') },
    { key: 'context_hints', value: jsonRaw('context_hints') },
    { key: 'status', value: jsonString(dialect, 'status') },
    { key: 'bidding_config', value: jsonRaw('bidding_config') },
    { key: 'product_set', value: jsonRaw('product_set'), omitNull: true },
  ]);
}

/** The same object rendered from a row in hand; `withProductSet: false` for update responses (docs/ads.md). */
export function adGroupJson(row: AdGroupRow, withProductSet = true): string {
  return (
    `{"id":${JSON.stringify(row.id)},"created_at":${row.created_at},"updated_at":${row.updated_at},"name":${JSON.stringify(row.name)},` +
    `"description":${JSON.stringify(row.description)},"context_hints":${row.context_hints},"status":${JSON.stringify(row.status)},` +
    `"bidding_config":${row.bidding_config}${withProductSet && row.product_set !== null ? `,"product_set":${row.product_set}` : ''}}`
  );
}
