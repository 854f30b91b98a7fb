import type { FastifyReply, FastifyRequest } from 'fastify';
import { needs, type PlatformPrincipal } from '../core/auth.js';
import type { App, Ctx } from '../core/module.js';
import { modelLimited, type Admission } from '../ratelimit/service.js';
import * as O from './objects.js';
import * as S from './schemas.js';
import * as svc from './service.js';
import { streamRun } from './sse.js';
import type { StoredEvent } from './store/events.js';
import { isObject } from './validate.js';
import { runView } from './views.js';

/**
 * The threads interface under `/v1` (section D of the platform spec; shapes from the OpenAPI document).
 * `OpenAI-Beta: assistants=v2` is accepted and not required. Routes only parse, authorize and shape.
 * A route that streams (`stream: true`) answers with server-sent events (sse.ts); its response schema
 * is the JSON reply without `stream`.
 */
const POLL_AFTER_MS = '25';

/** What the rate limiter is told about a run to create. */
interface RunAdmission {
  assistant_id: string;
  model?: string | null;
  instructions?: string | null;
  additional_instructions?: string | null;
  max_completion_tokens?: number | null;
  /** The messages the request adds (additional_messages, or the new thread's). */
  messages: unknown;
}

/**
 * The single call site where run creation is admitted by the rate limiter (`ctx.services.ratelimit`;
 * skipped when absent). The admission's ticket is stored on the run and released with the run's usage
 * when it ends (runs/finish.ts settleTicket), by whichever instance ends it.
 */
async function admitRun(
  ctx: Ctx,
  request: FastifyRequest,
  principal: PlatformPrincipal,
  run: RunAdmission,
): Promise<{ admission: Admission | null; assistant?: svc.AssistantDefaults }> {
  const limiter = ctx.services.ratelimit;
  if (!limiter) return { admission: null };
  // Read once: the create takes the assistant's settings from this same read.
  const assistant = run.model ? undefined : await svc.runAssistant(ctx, principal.projectId, run.assistant_id);
  const model = run.model ?? assistant!.model;
  const inputText = [run.instructions ?? '', run.additional_instructions ?? '', JSON.stringify(run.messages ?? [])];
  return {
    admission: await limiter.admit(request, principal, { model, maxTokens: run.max_completion_tokens ?? null, inputText }),
    assistant,
  };
}

/** Creates a run through the limiter; a refused creation gives the admission back. */
async function createAdmitted(
  ctx: Ctx,
  request: FastifyRequest,
  principal: PlatformPrincipal,
  run: RunAdmission,
  create: (opts: svc.CreateOptions) => Promise<svc.RunRow>,
) {
  const { admission, assistant } = await admitRun(ctx, request, principal, run);
  // The create's own events, as committed: its stream writes them without reading them back.
  const events: StoredEvent[] = [];
  try {
    return { run: await create({ ticket: admission?.ticket, assistant, events }), headers: admission?.headers ?? {}, events };
  } catch (err) {
    await admission?.release({ failed: true });
    throw err;
  }
}

/** Registers the routes of assistants, threads, messages, runs and run steps. */
export function routes(app: App, ctx: Ctx): void {
  const project = (req: FastifyRequest) => ctx.auth.principalOf(req).projectId;
  const includeContent = (query: { 'include[]'?: string[] }) => (query['include[]'] ?? []).includes(S.INCLUDE_FILE_SEARCH_CONTENT);
  const tags = ['assistants'];
  const polled = (reply: FastifyReply) => reply.header('openai-poll-after-ms', POLL_AFTER_MS);

  // Assistants
  app.post(
    '/v1/assistants',
    { config: needs('assistants', 'write'), schema: { tags, body: S.CreateAssistantBody, response: { 200: O.AssistantObject } } },
    async (req) => svc.createAssistant(ctx, project(req), req.body),
  );
  app.get(
    '/v1/assistants',
    { config: needs('assistants', 'read'), schema: { tags, querystring: S.ListQuery, response: { 200: O.AssistantList } } },
    async (req) => svc.listAssistants(ctx, project(req), req.query),
  );
  app.get(
    '/v1/assistants/:assistant_id',
    { config: needs('assistants', 'read'), schema: { tags, params: S.AssistantParams, response: { 200: O.AssistantObject } } },
    async (req) => svc.getAssistant(ctx, project(req), req.params.assistant_id),
  );
  app.post(
    '/v1/assistants/:assistant_id',
    {
      config: needs('assistants', 'write'),
      schema: { tags, params: S.AssistantParams, body: S.ModifyAssistantBody, response: { 200: O.AssistantObject } },
    },
    async (req) => svc.modifyAssistant(ctx, project(req), req.params.assistant_id, req.body),
  );
  app.delete(
    '/v1/assistants/:assistant_id',
    { config: needs('assistants', 'write'), schema: { tags, params: S.AssistantParams, response: { 200: O.AssistantDeleted } } },
    async (req) => svc.deleteAssistant(ctx, project(req), req.params.assistant_id),
  );

  // Threads (a body may be left out where every member is optional)
  app.post(
    '/v1/threads',
    { config: needs('threads', 'write'), schema: { tags, body: S.CreateThreadBody, response: { 200: O.ThreadObject } } },
    async (req) => svc.createThread(ctx, project(req), req.body ?? {}),
  );
  app.post(
    '/v1/threads/runs',
    {
      config: { ...needs('threads', 'write'), ...modelLimited },
      schema: { tags, body: S.CreateThreadAndRunBody, querystring: S.IncludeQuery, response: { 200: O.RunObject } },
    },
    async (req, reply) => {
      const principal = ctx.auth.principalOf(req);
      const body = req.body;
      const admission = { ...body, messages: isObject(body.thread) ? body.thread.messages : [] };
      const { run, headers, events } = await createAdmitted(ctx, req, principal, admission, (opts) =>
        svc.createThreadAndRun(ctx, principal.projectId, body, opts),
      );
      if (body.stream)
        return streamRun(ctx, req, reply, run.id, { afterSeq: 0, first: events, headers, includeContent: includeContent(req.query) });
      polled(reply);
      return runView(run);
    },
  );
  app.get(
    '/v1/threads/:thread_id',
    { config: needs('threads', 'read'), schema: { tags, params: S.ThreadParams, response: { 200: O.ThreadObject } } },
    async (req) => svc.getThread(ctx, project(req), req.params.thread_id),
  );
  app.post(
    '/v1/threads/:thread_id',
    {
      config: needs('threads', 'write'),
      schema: { tags, params: S.ThreadParams, body: S.ModifyThreadBody, response: { 200: O.ThreadObject } },
    },
    async (req) => svc.modifyThread(ctx, project(req), req.params.thread_id, req.body ?? {}),
  );
  app.delete(
    '/v1/threads/:thread_id',
    { config: needs('threads', 'write'), schema: { tags, params: S.ThreadParams, response: { 200: O.ThreadDeleted } } },
    async (req) => svc.deleteThread(ctx, project(req), req.params.thread_id),
  );

  // Messages
  app.post(
    '/v1/threads/:thread_id/messages',
    {
      config: needs('threads', 'write'),
      schema: { tags, params: S.ThreadParams, body: S.CreateMessageBody, response: { 200: O.MessageObject } },
    },
    async (req) => svc.createMessage(ctx, project(req), req.params.thread_id, req.body),
  );
  app.get(
    '/v1/threads/:thread_id/messages',
    {
      config: needs('threads', 'read'),
      schema: { tags, params: S.ThreadParams, querystring: S.ListMessagesQuery, response: { 200: O.MessageList } },
    },
    async (req) => svc.listMessages(ctx, project(req), req.params.thread_id, req.query),
  );
  app.get(
    '/v1/threads/:thread_id/messages/:message_id',
    { config: needs('threads', 'read'), schema: { tags, params: S.MessageParams, response: { 200: O.MessageObject } } },
    async (req) => svc.getMessage(ctx, project(req), req.params.thread_id, req.params.message_id),
  );
  app.post(
    '/v1/threads/:thread_id/messages/:message_id',
    {
      config: needs('threads', 'write'),
      schema: { tags, params: S.MessageParams, body: S.ModifyBody, response: { 200: O.MessageObject } },
    },
    async (req) => svc.modifyMessage(ctx, project(req), req.params.thread_id, req.params.message_id, req.body ?? {}),
  );
  app.delete(
    '/v1/threads/:thread_id/messages/:message_id',
    { config: needs('threads', 'write'), schema: { tags, params: S.MessageParams, response: { 200: O.MessageDeleted } } },
    async (req) => svc.deleteMessage(ctx, project(req), req.params.thread_id, req.params.message_id),
  );

  // Runs
  app.post(
    '/v1/threads/:thread_id/runs',
    {
      config: { ...needs('threads', 'write'), ...modelLimited },
      schema: { tags, params: S.ThreadParams, body: S.CreateRunBody, querystring: S.IncludeQuery, response: { 200: O.RunObject } },
    },
    async (req, reply) => {
      const principal = ctx.auth.principalOf(req);
      const body = req.body;
      const admission = { ...body, messages: body.additional_messages ?? [] };
      const { run, headers, events } = await createAdmitted(ctx, req, principal, admission, (opts) =>
        svc.createRun(ctx, principal.projectId, req.params.thread_id, body, opts),
      );
      if (body.stream)
        return streamRun(ctx, req, reply, run.id, { afterSeq: 0, first: events, headers, includeContent: includeContent(req.query) });
      polled(reply);
      return runView(run);
    },
  );
  app.get(
    '/v1/threads/:thread_id/runs',
    { config: needs('threads', 'read'), schema: { tags, params: S.ThreadParams, querystring: S.ListQuery, response: { 200: O.RunList } } },
    async (req, reply) => {
      polled(reply);
      return svc.listRuns(ctx, project(req), req.params.thread_id, req.query);
    },
  );
  app.get(
    '/v1/threads/:thread_id/runs/:run_id',
    { config: needs('threads', 'read'), schema: { tags, params: S.RunParams, response: { 200: O.RunObject } } },
    async (req, reply) => {
      const run = await svc.readRun(ctx, project(req), req.params.thread_id, req.params.run_id);
      polled(reply);
      return runView(run);
    },
  );
  app.post(
    '/v1/threads/:thread_id/runs/:run_id',
    { config: needs('threads', 'write'), schema: { tags, params: S.RunParams, body: S.ModifyBody, response: { 200: O.RunObject } } },
    async (req, reply) => {
      const run = await svc.modifyRun(ctx, project(req), req.params.thread_id, req.params.run_id, req.body ?? {});
      polled(reply);
      return run;
    },
  );
  app.post(
    '/v1/threads/:thread_id/runs/:run_id/cancel',
    { config: needs('threads', 'write'), schema: { tags, params: S.RunParams, response: { 200: O.RunObject } } },
    async (req, reply) => {
      const run = await svc.cancelRun(ctx, project(req), req.params.thread_id, req.params.run_id);
      polled(reply);
      return run;
    },
  );
  app.post(
    '/v1/threads/:thread_id/runs/:run_id/submit_tool_outputs',
    {
      config: needs('threads', 'write'),
      schema: { tags, params: S.RunParams, body: S.SubmitToolOutputsBody, response: { 200: O.RunObject } },
    },
    async (req, reply) => {
      const { run, afterSeq, events } = await svc.submitToolOutputs(ctx, project(req), req.params.thread_id, req.params.run_id, req.body);
      if (req.body.stream) return streamRun(ctx, req, reply, run.id, { afterSeq, first: events });
      polled(reply);
      return runView(run);
    },
  );

  // Run steps
  app.get(
    '/v1/threads/:thread_id/runs/:run_id/steps',
    {
      config: needs('threads', 'read'),
      schema: { tags, params: S.RunParams, querystring: S.ListStepsQuery, response: { 200: O.RunStepList } },
    },
    async (req) => {
      const { 'include[]': _include, ...page } = req.query;
      return svc.listSteps(ctx, project(req), req.params.thread_id, req.params.run_id, page, includeContent(req.query));
    },
  );
  app.get(
    '/v1/threads/:thread_id/runs/:run_id/steps/:step_id',
    {
      config: needs('threads', 'read'),
      schema: { tags, params: S.StepParams, querystring: S.IncludeQuery, response: { 200: O.RunStepObject } },
    },
    async (req) => svc.getStep(ctx, project(req), req.params.thread_id, req.params.run_id, req.params.step_id, includeContent(req.query)),
  );
}
