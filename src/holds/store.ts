import type { Selectable } from 'kysely';
import { precompiled, type Exec } from '../store/db.js';
import type { HoldsTables } from './tables.js';

// The SQL of per-project work holds.

const holdsOf = precompiled<{ projectId: string }, Selectable<HoldsTables['work_holds']>>(['projectId'], (db, a) =>
  db.selectFrom('work_holds').selectAll().where('project_id', '=', a.projectId),
);
/** A project's holds (every ingestion asks): the row is shared by the same read in one turn, not to be changed. */
export const getHolds = async (exec: Exec, projectId: string) => (await holdsOf(exec, { projectId }))[0];

export async function putHolds(exec: Exec, row: { project_id: string; batch_hold_at: string; batch_pace: string; ingestion: string }) {
  const { project_id, ...rest } = row;
  await exec
    .insertInto('work_holds')
    .values(row)
    .onConflict((oc) => oc.column('project_id').doUpdateSet(rest))
    .execute();
  return project_id;
}

export async function deleteHolds(exec: Exec, projectId: string): Promise<void> {
  await exec.deleteFrom('work_holds').where('project_id', '=', projectId).execute();
}
