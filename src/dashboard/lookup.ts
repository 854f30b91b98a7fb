import { locateThreadObject } from '../assistants/service.js';
import { locateBatch } from '../batches/service.js';
import { locateConversation } from '../conversations/service.js';
import { locateContainer, locateContainerFile } from '../containers/service.js';
import { ApiError } from '../core/errors.js';
import type { Ctx } from '../core/module.js';
import { locateFile } from '../files/service.js';
import { locateApiKey } from '../identity/service.js';
import { locateExchange } from '../identity/workload/service.js';
import { locateResponse } from '../responses/types.js';
import { locateVectorStore } from '../vector-stores/service.js';
import { eventById, locateDelivery, locateEndpoint } from '../webhooks/service.js';

/** Where an id is shown: what it names, its project, and the dashboard page (path and query) that opens it. */
export interface Found {
  kind: string;
  project_id: string | null;
  url: string;
}

const page = (path: string, query: Record<string, string | null | undefined> = {}) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v) q.set(k, v);
  const s = q.toString();
  return `/dashboard/${path}${s ? `?${s}` : ''}`;
};

type Finder = (ctx: Ctx, id: string) => Promise<Found | null | undefined>;

const threadObject =
  (kind: string): Finder =>
  async (ctx, id) => {
    const at = await locateThreadObject(ctx.store.db, id);
    return at && { kind, project_id: at.project_id, url: page('runs', { project: at.project_id, thread: at.thread_id, run: at.run_id }) };
  };

/**
 * Every id prefix Standin issues that the dashboard has a page for (core/ids `newId` callers, and the request
 * ids of server/app.ts), with how to find the object from its id alone.
 */
const FINDERS: Record<string, { kind: string; find: Finder }> = {
  req: {
    kind: 'request',
    find: async (ctx, id) => {
      const r = ctx.services.requestLog.get(id);
      return r && { kind: 'request', project_id: r.project_id, url: `/dashboard/requests/${encodeURIComponent(id)}` };
    },
  },
  evt: {
    kind: 'event',
    find: async (ctx, id) => {
      const e = await eventById(ctx.store.db, id);
      return e && { kind: 'event', project_id: e.project_id, url: page('webhooks', { project: e.project_id, event: id }) };
    },
  },
  whdel: {
    kind: 'webhook_delivery',
    find: async (ctx, id) => {
      const d = await locateDelivery(ctx.store.db, id);
      return (
        d && {
          kind: 'webhook_delivery',
          project_id: d.project_id,
          url: page('webhooks', { project: d.project_id, endpoint: d.endpoint_id, delivery: id }),
        }
      );
    },
  },
  whep: {
    kind: 'webhook_endpoint',
    find: async (ctx, id) => {
      const e = await locateEndpoint(ctx.store.db, id);
      return e && { kind: 'webhook_endpoint', project_id: e.project_id, url: page('webhooks', { project: e.project_id, endpoint: id }) };
    },
  },
  thread: { kind: 'thread', find: threadObject('thread') },
  run: { kind: 'run', find: threadObject('run') },
  msg: { kind: 'message', find: threadObject('message') },
  step: { kind: 'run_step', find: threadObject('run_step') },
  file: {
    kind: 'file',
    find: async (ctx, id) => {
      const f = await locateFile(ctx, id);
      return f && { kind: 'file', project_id: f.project_id, url: page('files', { project: f.project_id, file: id }) };
    },
  },
  vs: {
    kind: 'vector_store',
    find: async (ctx, id) => {
      const v = await locateVectorStore(ctx.store.db, id);
      return v && { kind: 'vector_store', project_id: v.project_id, url: page('files', { project: v.project_id, vector_store: id }) };
    },
  },
  batch: {
    kind: 'batch',
    find: async (ctx, id) => {
      const b = await locateBatch(ctx.store.db, id);
      return b && { kind: 'batch', project_id: b.project_id, url: page('files', { project: b.project_id, batch: id }) };
    },
  },
  resp: {
    kind: 'response',
    find: async (ctx, id) => {
      const r = await locateResponse(ctx.store.db, id);
      return r && { kind: 'response', project_id: r.project_id, url: page('responses', { project: r.project_id, response: id }) };
    },
  },
  cntr: {
    kind: 'container',
    find: async (ctx, id) => {
      const c = await locateContainer(ctx, id);
      return c && { kind: 'container', project_id: c.project_id, url: page('containers', { project: c.project_id, container: id }) };
    },
  },
  cfile: {
    kind: 'container_file',
    find: async (ctx, id) => {
      const f = await locateContainerFile(ctx, id);
      return (
        f && {
          kind: 'container_file',
          project_id: f.project_id,
          url: page('containers', { project: f.project_id, container: f.container_id }),
        }
      );
    },
  },
  conv: {
    kind: 'conversation',
    find: async (ctx, id) => {
      const c = await locateConversation(ctx.store.db, id);
      return c && { kind: 'conversation', project_id: c.project_id, url: page('responses', { project: c.project_id, conversation: id }) };
    },
  },
  key: {
    kind: 'api_key',
    find: async (ctx, id) => {
      const k = await locateApiKey(ctx.store.db, id);
      return k && { kind: 'api_key', project_id: k.project_id, url: page('overview', { key: id }) };
    },
  },
  wxchg: {
    kind: 'token_exchange',
    find: async (ctx, id) => {
      const x = await locateExchange(ctx.store.db, id);
      return x && { kind: 'token_exchange', project_id: null, url: page('identity', { exchange: id }) };
    },
  },
};

/** Prefixes that name something the dashboard has no page of its own for, with where to look instead. */
const ELSEWHERE: Record<string, string> = {
  batch_req: "is a line of a batch's output file: search for the batch id (batch_…) and open its output.",
};

/** How a prefix meets the rest of the id: `_`, but the platform's file ids read `file-…` (files/service). */
const lead = (prefix: string) => (prefix === 'file' ? 'file-' : `${prefix}_`);

/** The prefixes the search box takes, for its hint and its refusals. */
export const PREFIXES = Object.keys(FINDERS).map(lead);

/** The prefix of an id: ids are `<prefix>_<time-ordered part>` (`file-…` for files), and some prefixes hold an underscore (`batch_req`). */
function prefixOf(id: string): string | null {
  const known = [...Object.keys(ELSEWHERE), ...Object.keys(FINDERS)].sort((a, b) => b.length - a.length);
  return known.find((p) => id.startsWith(lead(p)) && id.length > p.length + 1) ?? null;
}

/** Finds the page of any id; a 404 that says why when there is none. */
export async function lookup(ctx: Ctx, raw: string): Promise<Found> {
  const id = raw.trim();
  const prefix = prefixOf(id);
  if (prefix && ELSEWHERE[prefix]) throw new ApiError('not_found_error', `'${id}' ${ELSEWHERE[prefix]}`, { param: 'id', code: 'no_page' });
  if (!prefix) {
    throw new ApiError('not_found_error', `'${id}' is not an id Standin issues. Ids start with a type: ${PREFIXES.join(', ')}.`, {
      param: 'id',
      code: 'unknown_prefix',
    });
  }
  const { kind, find } = FINDERS[prefix];
  const found = await find(ctx, id);
  if (found) return found;
  const why =
    prefix === 'req'
      ? ` The request log keeps this instance's newest ${ctx.settings.requestLogSize} requests.`
      : ' It may have been deleted, or expired, or it was made by another Standin.';
  throw new ApiError('not_found_error', `No ${kind.replaceAll('_', ' ')} found with id '${id}'.${why}`, { param: 'id', code: 'not_found' });
}
