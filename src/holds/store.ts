import type { Exec } from '../store/db.js';

/** The SQL of per-project work holds. */
export const getHolds = (exec: Exec, projectId: string) =>
  exec.selectFrom('work_holds').selectAll().where('project_id', '=', projectId).executeTakeFirst();

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
