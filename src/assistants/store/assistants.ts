import type { Updateable } from 'kysely';
import { paginate, type ListParams } from '../../core/pagination.js';
import { precompiled, type Exec } from '../../store/db.js';
import type { AssistantsTables } from '../tables.js';
import { LIST } from './page.js';

/** SQL of assistants, scoped to the caller's project: another project's assistant is "not found". */
export type AssistantRow = AssistantsTables['assistants'];

const assistantById = precompiled(['id', 'projectId'], (db, a: { id: string; projectId: string }) =>
  db.selectFrom('assistants').selectAll().where('id', '=', a.id).where('project_id', '=', a.projectId),
);

/** An assistant of the project (compiled once: every run's create reads its assistant). */
export const getAssistant = async (db: Exec, projectId: string, id: string): Promise<AssistantRow | undefined> =>
  (await assistantById(db, { id, projectId }))[0];

export async function insertAssistant(db: Exec, row: AssistantRow): Promise<void> {
  await db.insertInto('assistants').values(row).execute();
}

/** Inserts an assistant unless one with its id exists (the demo seed, applied at every first start). */
export async function insertAssistantOnce(db: Exec, row: AssistantRow): Promise<void> {
  await db
    .insertInto('assistants')
    .values(row)
    .onConflict((oc) => oc.column('id').doNothing())
    .execute();
}

export function pageAssistants<T>(db: Exec, projectId: string, page: ListParams, map: (row: AssistantRow) => T) {
  return paginate(db.selectFrom('assistants').selectAll().where('project_id', '=', projectId), 'id', page, { ...LIST, map });
}

export const updateAssistant = (db: Exec, id: string, set: Updateable<AssistantRow>) =>
  db.updateTable('assistants').set(set).where('id', '=', id).returningAll().executeTakeFirstOrThrow();

/** Deletes an assistant of the project; false when there was none. */
export async function deleteAssistant(db: Exec, projectId: string, id: string): Promise<boolean> {
  const res = await db.deleteFrom('assistants').where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
