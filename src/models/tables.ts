import type { Kysely, Migration } from 'kysely';

/** The `models` section the config file (or the admin API) applied last, shared by every instance on the store. */
export interface ModelsTables {
  models_config: {
    /** Always `root`: the section is a root section of the config file. */
    scope: string;
    /** The section, JSON. */
    value: string;
    /** Standin clock, ms. */
    updated_at: number;
  };
}

export const modelsMigrations: Record<string, Migration> = {
  '202611231210_models_config': {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('models_config')
        .addColumn('scope', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
};

declare module '../store/schema.js' {
  interface DB extends ModelsTables {}
}
