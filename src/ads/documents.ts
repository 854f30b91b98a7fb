import type { AdGroupRow } from './store.js';

/** An ad group row without its rendered document. */
export type AdGroupFields = Omit<AdGroupRow, 'json'>;

/**
 * The ad group object as JSON text, the way the ads API answers: the stored JSON columns are spliced in
 * as they are, never parsed and serialized again. Field order is the spec's; `product_set` appears only
 * when the ad group has one, and `withProductSet: false` leaves it out (update responses, docs/ads.md).
 */
export function adGroupJson(row: AdGroupFields, withProductSet = true): string {
  return (
    `{"id":${JSON.stringify(row.id)},"created_at":${row.created_at},"updated_at":${row.updated_at},"name":${JSON.stringify(row.name)},` +
    `"description":${JSON.stringify(row.description)},"context_hints":${row.context_hints},"status":${JSON.stringify(row.status)},` +
    `"bidding_config":${row.bidding_config}${withProductSet && row.product_set !== null ? `,"product_set":${row.product_set}` : ''}}`
  );
}

/**
 * The row with its document: every write stores the rendered ad group next to its fields, so reads
 * (a retrieve, a page of 500) send stored text and build nothing.
 */
export const withJson = (fields: AdGroupFields): AdGroupRow => ({ ...fields, json: adGroupJson(fields) });
