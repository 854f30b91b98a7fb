import type { Exec } from '../../store/db.js';

/** Where an object of the threads interface lives, found by its id alone (the dashboard's search). */
export interface Located {
  project_id: string;
  thread_id: string;
  run_id: string | null;
}

/** A thread, run, message or step by its id, in any project; undefined when no such object is stored. */
export async function locate(db: Exec, id: string): Promise<Located | undefined> {
  if (id.startsWith('thread_')) {
    const r = await db.selectFrom('threads').select(['project_id', 'id']).where('id', '=', id).executeTakeFirst();
    return r && { project_id: r.project_id, thread_id: r.id, run_id: null };
  }
  if (id.startsWith('run_')) {
    const r = await db.selectFrom('thread_runs').select(['project_id', 'thread_id', 'id']).where('id', '=', id).executeTakeFirst();
    return r && { project_id: r.project_id, thread_id: r.thread_id, run_id: r.id };
  }
  if (id.startsWith('msg_')) {
    const r = await db.selectFrom('thread_messages').select(['project_id', 'thread_id', 'run_id']).where('id', '=', id).executeTakeFirst();
    return r && { project_id: r.project_id, thread_id: r.thread_id, run_id: r.run_id };
  }
  if (id.startsWith('step_')) {
    const r = await db.selectFrom('run_steps').select(['project_id', 'thread_id', 'run_id']).where('id', '=', id).executeTakeFirst();
    return r && { project_id: r.project_id, thread_id: r.thread_id, run_id: r.run_id };
  }
  return undefined;
}
