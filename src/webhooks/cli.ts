import type { CliEnv, Ctx } from '../core/module.js';
import { listOrganizations, listProjects } from '../identity/service.js';
import { EVENT_TYPES } from './catalog.js';
import { triggerEvent, type TriggerData } from './trigger.js';

const USAGE = `usage: standin trigger <event type> [--project <proj_id>] [--event-data '<json>']

Emits one webhook event with realistic data into the store that --data / --database-url name (the
same flags as 'standin serve'). A running Standin on that store delivers it: at once with PostgreSQL
(LISTEN/NOTIFY), within a second with SQLite; with none running, it waits in the outbox.
--project defaults to the only project, or proj_demo. --event-data pins members of the event data:
{"id"}, SIP {"call_id"|"session_id", "sip_headers":[{name,value}], "sip_media_security"}, safety {"safety_identifier","category"}.

event types:
  ${EVENT_TYPES.join('\n  ')}
`;

/** The store's only project, or proj_demo when there are several (or none). */
async function onlyProject(ctx: Ctx): Promise<string> {
  const projects = [];
  for (const org of await listOrganizations(ctx.store.db)) projects.push(...(await listProjects(ctx.store.db, org.id)));
  return projects.length === 1 ? projects[0].id : 'proj_demo';
}

/** `standin trigger <type>`: writes the event (and the object behind it) straight into the store. Returns the exit code. */
export async function runTriggerCli(args: string[], env: CliEnv): Promise<number> {
  let type: string | undefined;
  let projectId: string | undefined;
  let data: TriggerData | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const value = () => {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : args[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    try {
      if (a === '--help' || a === '-h') {
        process.stdout.write(USAGE);
        return 0;
      } else if (a.startsWith('--project')) projectId = value();
      else if (a.startsWith('--event-data')) data = JSON.parse(value());
      else if (a.startsWith('--')) throw new Error(`unknown option ${a}`);
      else if (type === undefined) type = a;
      else throw new Error(`unexpected argument '${a}'`);
    } catch (err) {
      process.stderr.write(`standin trigger: ${(err as Error).message}\n\n${USAGE}`);
      return 2;
    }
  }
  if (!type) {
    process.stderr.write(USAGE);
    return 2;
  }
  const standin = await env.boot({ ...env.settings, workers: false, logLevel: 'silent' }, { logger: false });
  try {
    projectId ??= await onlyProject(standin.ctx);
    const event = await triggerEvent(standin.ctx, projectId, type, data);
    process.stdout.write(JSON.stringify(event, null, 2) + '\n');
    return 0;
  } catch (err) {
    const e = err as { status?: number; message: string; param?: string };
    process.stderr.write(`standin trigger: ${e.message}\n`);
    return e.status && e.status < 500 ? 2 : 1;
  } finally {
    await standin.close();
  }
}
