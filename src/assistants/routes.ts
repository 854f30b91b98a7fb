import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Ctx } from '../core/module.js';
import type { PlatformPrincipal } from '../core/auth.js';
import * as svc from './service.js';
import { streamRun } from './sse.js';
import * as S from './schemas.js';
import { runView } from './views.js';
import type { RunRow } from './lifecycle.js';
import type { Admission, RateLimitService, Ticket } from '../ratelimit/service.js';

/**
 * The threads interface under `/v1` (section D of the platform spec; shapes from the OpenAPI document).
 * `OpenAI-Beta: assistants=v2` is accepted and not required. Routes only parse, authorize and shape.
 */
const POLL_AFTER_MS = '25';

/**
 * The single call site where run creation is admitted by the rate limiter (`ctx.services.ratelimit`;
 * skipped when absent). The admission's ticket is stored on the run and released with the run's usage
 * when it ends (service.settleTicket), by whichever instance ends it.
 */
async function admitRun(ctx: Ctx, request: FastifyRequest, principal: PlatformPrincipal, body: any): Promise<Admission | null> {
  const limiter = ctx.services.ratelimit;
  if (!limiter) return null;
  const model = body.model ?? (await svc.getAssistant(ctx, principal.projectId, body.assistant_id)).model;
  const messages = body.additional_messages ?? body.thread?.messages ?? [];
  const inputText = [body.instructions ?? '', body.additional_instructions ?? '', JSON.stringify(messages)];
  return limiter.admit(request, principal, { model, maxTokens: body.max_completion_tokens ?? null, inputText });
}

/** Creates a run through the limiter; a refused creation gives the admission back. */
async function createAdmitted(ctx: Ctx, request: FastifyRequest, principal: PlatformPrincipal, body: any, create: (ticket?: Ticket) => Promise<RunRow>) {
  const admission = await admitRun(ctx, request, principal, body);
  try {
    return { run: await create(admission?.ticket), headers: admission?.headers ?? {} };
  } catch (err) {
    await admission?.release({ failed: true });
    throw err;
  }
}

export function assistantsRoutes(app: FastifyInstance, ctx: Ctx) {
  const auth = (req: FastifyRequest, group: 'assistants' | 'threads', access: 'read' | 'write') => ctx.auth.platform(req, { group, access });
  const project = async (req: FastifyRequest, group: 'assistants' | 'threads', access: 'read' | 'write') => (await auth(req, group, access)).projectId;
  const p = (req: FastifyRequest) => req.params as Record<string, string>;
  const includeContent = (req: FastifyRequest) => ((req.query as any)['include[]'] ?? []).includes(S.INCLUDE_FILE_SEARCH_CONTENT);
  const tags = ['assistants'];
  const runReply = (reply: FastifyReply) => reply.header('openai-poll-after-ms', POLL_AFTER_MS);

  // Assistants
  app.post('/v1/assistants', { schema: { tags, body: S.CreateAssistantBody } }, async (req) => svc.createAssistant(ctx, await project(req, 'assistants', 'write'), req.body as any));
  app.get('/v1/assistants', { schema: { tags, querystring: S.ListQuery } }, async (req) => svc.listAssistants(ctx, await project(req, 'assistants', 'read'), req.query as any));
  app.get('/v1/assistants/:assistant_id', { schema: { tags, params: S.AssistantParams } }, async (req) => svc.getAssistant(ctx, await project(req, 'assistants', 'read'), p(req).assistant_id));
  app.post('/v1/assistants/:assistant_id', { schema: { tags, params: S.AssistantParams, body: S.ModifyAssistantBody } }, async (req) =>
    svc.modifyAssistant(ctx, await project(req, 'assistants', 'write'), p(req).assistant_id, req.body as any),
  );
  app.delete('/v1/assistants/:assistant_id', { schema: { tags, params: S.AssistantParams } }, async (req) => svc.deleteAssistant(ctx, await project(req, 'assistants', 'write'), p(req).assistant_id));

  // Threads
  app.post('/v1/threads', { schema: { tags, body: S.CreateThreadBody } }, async (req) => svc.createThread(ctx, await project(req, 'threads', 'write'), (req.body as any) ?? {}));
  app.post('/v1/threads/runs', { schema: { tags, body: S.CreateThreadAndRunBody, querystring: S.IncludeQuery } }, async (req, reply) => {
    const principal = await auth(req, 'threads', 'write');
    const body = req.body as any;
    const { run, headers } = await createAdmitted(ctx, req, principal, body, (ticket) => svc.createThreadAndRun(ctx, principal.projectId, body, { ticket }));
    if (body.stream) return streamRun(ctx, req, reply, run.id, 0, headers);
    runReply(reply);
    return runView(run);
  });
  app.get('/v1/threads/:thread_id', { schema: { tags, params: S.ThreadParams } }, async (req) => svc.getThread(ctx, await project(req, 'threads', 'read'), p(req).thread_id));
  app.post('/v1/threads/:thread_id', { schema: { tags, params: S.ThreadParams, body: S.ModifyThreadBody } }, async (req) =>
    svc.modifyThread(ctx, await project(req, 'threads', 'write'), p(req).thread_id, (req.body as any) ?? {}),
  );
  app.delete('/v1/threads/:thread_id', { schema: { tags, params: S.ThreadParams } }, async (req) => svc.deleteThread(ctx, await project(req, 'threads', 'write'), p(req).thread_id));

  // Messages
  app.post('/v1/threads/:thread_id/messages', { schema: { tags, params: S.ThreadParams, body: S.CreateMessageBody } }, async (req) =>
    svc.createMessage(ctx, await project(req, 'threads', 'write'), p(req).thread_id, req.body as any),
  );
  app.get('/v1/threads/:thread_id/messages', { schema: { tags, params: S.ThreadParams, querystring: S.ListMessagesQuery } }, async (req) =>
    svc.listMessages(ctx, await project(req, 'threads', 'read'), p(req).thread_id, req.query as any),
  );
  app.get('/v1/threads/:thread_id/messages/:message_id', { schema: { tags, params: S.MessageParams } }, async (req) =>
    svc.getMessage(ctx, await project(req, 'threads', 'read'), p(req).thread_id, p(req).message_id),
  );
  app.post('/v1/threads/:thread_id/messages/:message_id', { schema: { tags, params: S.MessageParams, body: S.ModifyBody } }, async (req) =>
    svc.modifyMessage(ctx, await project(req, 'threads', 'write'), p(req).thread_id, p(req).message_id, (req.body as any) ?? {}),
  );
  app.delete('/v1/threads/:thread_id/messages/:message_id', { schema: { tags, params: S.MessageParams } }, async (req) =>
    svc.deleteMessage(ctx, await project(req, 'threads', 'write'), p(req).thread_id, p(req).message_id),
  );

  // Runs
  app.post('/v1/threads/:thread_id/runs', { schema: { tags, params: S.ThreadParams, body: S.CreateRunBody, querystring: S.IncludeQuery } }, async (req, reply) => {
    const principal = await auth(req, 'threads', 'write');
    const body = req.body as any;
    const { run, headers } = await createAdmitted(ctx, req, principal, body, (ticket) => svc.createRun(ctx, principal.projectId, p(req).thread_id, body, { ticket }));
    if (body.stream) return streamRun(ctx, req, reply, run.id, 0, headers);
    runReply(reply);
    return runView(run);
  });
  app.get('/v1/threads/:thread_id/runs', { schema: { tags, params: S.ThreadParams, querystring: S.ListQuery } }, async (req, reply) => {
    runReply(reply);
    return svc.listRuns(ctx, await project(req, 'threads', 'read'), p(req).thread_id, req.query as any);
  });
  app.get('/v1/threads/:thread_id/runs/:run_id', { schema: { tags, params: S.RunParams } }, async (req, reply) => {
    const run = await svc.readRun(ctx, await project(req, 'threads', 'read'), p(req).thread_id, p(req).run_id);
    runReply(reply);
    return runView(run);
  });
  app.post('/v1/threads/:thread_id/runs/:run_id', { schema: { tags, params: S.RunParams, body: S.ModifyBody } }, async (req, reply) => {
    const run = await svc.modifyRun(ctx, await project(req, 'threads', 'write'), p(req).thread_id, p(req).run_id, (req.body as any) ?? {});
    runReply(reply);
    return run;
  });
  app.post('/v1/threads/:thread_id/runs/:run_id/cancel', { schema: { tags, params: S.RunParams } }, async (req, reply) => {
    const run = await svc.cancelRun(ctx, await project(req, 'threads', 'write'), p(req).thread_id, p(req).run_id);
    runReply(reply);
    return run;
  });
  app.post('/v1/threads/:thread_id/runs/:run_id/submit_tool_outputs', { schema: { tags, params: S.RunParams, body: S.SubmitToolOutputsBody } }, async (req, reply) => {
    const body = req.body as any;
    const { run, afterSeq } = await svc.submitToolOutputs(ctx, await project(req, 'threads', 'write'), p(req).thread_id, p(req).run_id, body);
    if (body.stream) return streamRun(ctx, req, reply, run.id, afterSeq);
    runReply(reply);
    return runView(run);
  });

  // Run steps
  app.get('/v1/threads/:thread_id/runs/:run_id/steps', { schema: { tags, params: S.RunParams, querystring: S.ListStepsQuery } }, async (req) => {
    const { 'include[]': _include, ...page } = req.query as any;
    return svc.listSteps(ctx, await project(req, 'threads', 'read'), p(req).thread_id, p(req).run_id, page, includeContent(req));
  });
  app.get('/v1/threads/:thread_id/runs/:run_id/steps/:step_id', { schema: { tags, params: S.StepParams, querystring: S.IncludeQuery } }, async (req) =>
    svc.getStep(ctx, await project(req, 'threads', 'read'), p(req).thread_id, p(req).run_id, p(req).step_id, includeContent(req)),
  );
}
