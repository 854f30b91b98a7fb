import type { SelectQueryBuilder } from 'kysely';
import { invalid } from './errors.js';

/** Cursor list parameters of every list endpoint: `limit`, `after`, `before`, `order`. */
export interface ListParams {
  limit?: number;
  after?: string;
  before?: string;
  order?: 'asc' | 'desc';
}

export interface ListPage<T> {
  object: 'list';
  data: T[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/**
 * Runs a cursor-paged query. Ids are time-ordered, so the id is the sort key and the cursor:
 * `after` returns items past it in the list's order, `before` the items preceding it (still returned in
 * the list's order). Fetches one extra row to answer `has_more`.
 */
export async function paginate<DB, TB extends keyof DB, O extends { id: string }, T>(
  query: SelectQueryBuilder<DB, TB, O>,
  idColumn: string,
  params: ListParams,
  opts: { defaultLimit: number; maxLimit: number; map: (row: O) => T },
): Promise<ListPage<T>> {
  const limit = params.limit ?? opts.defaultLimit;
  if (!Number.isInteger(limit) || limit < 1 || limit > opts.maxLimit) {
    throw invalid(`'limit' must be an integer from 1 to ${opts.maxLimit}.`, 'limit', 'invalid_value');
  }
  const order = params.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw invalid("'order' must be 'asc' or 'desc'.", 'order', 'invalid_value');
  const col = idColumn as any;
  let q = query as SelectQueryBuilder<any, any, O>;
  // Walking backwards from `before` means reading in the opposite order, then flipping the page.
  const backwards = params.before !== undefined && params.after === undefined;
  if (params.after !== undefined) q = q.where(col, order === 'desc' ? '<' : '>', params.after);
  if (params.before !== undefined) q = q.where(col, order === 'desc' ? '>' : '<', params.before);
  const dir = backwards ? (order === 'desc' ? 'asc' : 'desc') : order;
  const rows = (await q.orderBy(col, dir).limit(limit + 1).execute()) as O[];
  const hasMore = rows.length > limit;
  const page = rows.slice(0, limit);
  if (backwards) page.reverse();
  const data = page.map(opts.map);
  return {
    object: 'list',
    data,
    first_id: page.length ? page[0].id : null,
    last_id: page.length ? page[page.length - 1].id : null,
    has_more: hasMore,
  };
}
