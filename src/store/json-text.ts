import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from './db.js';

/**
 * JSON text built by the database itself, for hot reads: rows leave the store as ready-to-send JSON, and
 * JSON columns (stored as JSON text) are spliced in as they are, never parsed and serialized again.
 * Every expression yields text, joined with `||` in both dialects.
 */

/** A text column as a JSON string, or `null`. */
export const jsonString = (dialect: Dialect, column: string): RawBuilder<string> =>
  dialect === 'sqlite' ? sql`json_quote(${sql.ref(column)})` : sql`coalesce(to_json(${sql.ref(column)})::text, 'null')`;

/** An integer column as a JSON number. */
export const jsonNumber = (column: string): RawBuilder<string> => sql`cast(${sql.ref(column)} as text)`;

/** A column holding JSON text, spliced in as is; SQL NULL stays NULL (see `omitNull`). */
export const jsonRaw = (column: string): RawBuilder<string> => sql`${sql.ref(column)}`;

export interface JsonMember {
  key: string;
  value: RawBuilder<string>;
  /** Leave the member out when its value is SQL NULL (never for the first member). */
  omitNull?: boolean;
}

/** `{"k":v,…}` from members in order. Keys are Standin's own field names, never user input. */
export function jsonObject(members: JsonMember[]): RawBuilder<string> {
  const parts = members.map(({ key, value, omitNull }, i) => {
    const member = sql`${sql.lit(`${i ? ',' : ''}"${key}":`)} || ${value}`;
    return omitNull ? sql`coalesce(${member}, '')` : member;
  });
  return sql`'{' || ${sql.join(parts, sql` || `)} || '}'`;
}
