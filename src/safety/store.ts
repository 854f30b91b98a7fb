import type { Exec } from '../store/db.js';

/** The SQL of safety cases and alerts: each object is kept as its JSON text. */
export async function insertCase(
  exec: Exec,
  row: { id: string; organization_id: string; project_id: string; payload: string; created_at: number },
): Promise<void> {
  await exec.insertInto('safety_cases').values(row).execute();
}

export async function insertAlert(
  exec: Exec,
  row: { id: string; organization_id: string; project_id: string | null; payload: string; created_at: number },
): Promise<void> {
  await exec.insertInto('safety_alerts').values(row).execute();
}

/** The case's JSON, when it belongs to the organization. */
export async function findCase(exec: Exec, organizationId: string, id: string): Promise<string | null> {
  const row = await exec
    .selectFrom('safety_cases')
    .select('payload')
    .where('id', '=', id)
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
  return row?.payload ?? null;
}

/** The alert's JSON and project (null: organization-wide), when it belongs to the organization. */
export async function findAlert(
  exec: Exec,
  organizationId: string,
  id: string,
): Promise<{ payload: string; project_id: string | null } | null> {
  const row = await exec
    .selectFrom('safety_alerts')
    .select(['payload', 'project_id'])
    .where('id', '=', id)
    .where('organization_id', '=', organizationId)
    .executeTakeFirst();
  return row ?? null;
}
