import type { Updateable } from 'kysely';
import { notFound } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { Ctx } from '../../core/module.js';
import type { ListParams } from '../../core/pagination.js';
import { fromJson, toJson } from '../../store/db.js';
import type { AssistantObject, ResponseFormat, Tool } from '../objects.js';
import type { CreateAssistantRequest, ModifyAssistantRequest } from '../schemas.js';
import * as store from '../store/assistants.js';
import { checkMetadata, checkResponseFormat, checkToolResources, checkTools } from '../validate.js';
import { assistantView } from '../views.js';
import { checkModel, checkToolsVsFormat, normalizeTools } from './common.js';
import { resolveToolResources } from './resources.js';

/** Assistants: a model with instructions, tools and settings that runs take as their defaults. */

export async function createAssistant(ctx: Ctx, projectId: string, body: CreateAssistantRequest): Promise<AssistantObject> {
  checkModel(ctx, body.model);
  checkTools(body.tools, 128);
  checkToolResources(body.tool_resources);
  checkMetadata(body.metadata);
  checkResponseFormat(body.response_format);
  checkToolsVsFormat(body.tools ?? [], body.response_format);
  const toolResources = body.tool_resources;
  const tools = normalizeTools(body.tools, body.model);
  const row = await ctx.store.db.transaction().execute(async (tx) => {
    // The helper's store is made in the assistant's transaction: a refused file leaves neither.
    const row: store.AssistantRow = {
      id: newId('asst', ctx.clock),
      project_id: projectId,
      created_at: ctx.clock.nowSeconds(),
      name: body.name ?? null,
      description: body.description ?? null,
      model: body.model,
      instructions: body.instructions ?? null,
      tools: JSON.stringify(tools),
      tool_resources: toJson(await resolveToolResources(ctx, tx, projectId, toolResources, { kind: 'assistant' })),
      metadata: toJson(body.metadata),
      temperature: body.temperature ?? null,
      top_p: body.top_p ?? null,
      response_format: toJson(body.response_format),
      reasoning_effort: body.reasoning_effort ?? null,
    };
    await store.insertAssistant(tx, row);
    return row;
  });
  return assistantView(row);
}

export async function getAssistant(ctx: Ctx, projectId: string, id: string): Promise<AssistantObject> {
  const row = await store.getAssistant(ctx.store.db, projectId, id);
  if (!row) throw notFound('assistant', id);
  return assistantView(row);
}

export function listAssistants(ctx: Ctx, projectId: string, page: ListParams) {
  return store.pageAssistants(ctx.store.db, projectId, page, assistantView);
}

export async function modifyAssistant(ctx: Ctx, projectId: string, id: string, body: ModifyAssistantRequest): Promise<AssistantObject> {
  const row = await store.getAssistant(ctx.store.db, projectId, id);
  if (!row) throw notFound('assistant', id);
  if (body.model !== undefined) checkModel(ctx, body.model);
  checkTools(body.tools, 128);
  checkToolResources(body.tool_resources, 'tool_resources', { helper: false });
  checkMetadata(body.metadata);
  checkResponseFormat(body.response_format);
  checkToolsVsFormat(
    body.tools ?? fromJson<Tool[]>(row.tools) ?? [],
    body.response_format !== undefined ? body.response_format : fromJson<ResponseFormat>(row.response_format),
  );
  const set: Updateable<store.AssistantRow> = {};
  if (body.name !== undefined) set.name = body.name;
  if (body.description !== undefined) set.description = body.description;
  if (body.model !== undefined) set.model = body.model;
  if (body.instructions !== undefined) set.instructions = body.instructions;
  if (body.temperature !== undefined) set.temperature = body.temperature;
  if (body.top_p !== undefined) set.top_p = body.top_p;
  if (body.reasoning_effort !== undefined) set.reasoning_effort = body.reasoning_effort;
  if (body.tools !== undefined) set.tools = JSON.stringify(normalizeTools(body.tools, body.model ?? row.model));
  const toolResources = body.tool_resources;
  if (toolResources !== undefined) {
    // No helper here (checked above): only the ids are checked.
    const resolved = await ctx.store.db
      .transaction()
      .execute((tx) => resolveToolResources(ctx, tx, projectId, toolResources, { kind: 'assistant' }));
    set.tool_resources = toJson(resolved);
  }
  if (body.metadata !== undefined) set.metadata = toJson(body.metadata);
  if (body.response_format !== undefined) set.response_format = toJson(body.response_format);
  if (!Object.keys(set).length) return assistantView(row);
  return assistantView(await store.updateAssistant(ctx.store.db, id, set));
}

export async function deleteAssistant(ctx: Ctx, projectId: string, id: string) {
  if (!(await store.deleteAssistant(ctx.store.db, projectId, id))) throw notFound('assistant', id);
  return { id, object: 'assistant.deleted' as const, deleted: true };
}
