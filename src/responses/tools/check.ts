import { invalid } from '../../core/errors.js';
import type { Ctx } from '../../core/module.js';
import { partChecker } from '../../core/validation.js';
import { HOSTED_TOOL_TYPES, type CreateResponseRequest, type FunctionTool, type HostedToolEntry, type ToolEntry } from '../schemas.js';
import { FunctionToolSchema } from '../schemas.js';
import { checkCustomTool, type CustomTool } from '../custom-tools.js';
import type { HostedTool } from './hosted.js';
import { HOSTED_TOOLS } from './registry.js';

const checkFunction = partChecker<FunctionTool>(FunctionToolSchema);

/** The 400 of a tool type of the document that Standin does not run (docs/responses.md has the table and the reasons). */
export function unsupportedTool(type: string, param: string): never {
  throw invalid(
    `'${param}' '${type}' is not supported on Standin's /v1/responses; see docs/responses.md (Tools) for the tool types it runs.`,
    param,
    'unsupported_value',
  );
}

/**
 * Checks `tools` entry by entry, each by its type (a function by its schema, a hosted tool by its own
 * `check`), then each hosted type's request-wide rules and a `tool_choice` naming a hosted type. Returns
 * the entries as the response echoes them (a hosted tool with its defaults filled).
 */
export function checkTools(body: CreateResponseRequest, hosted: readonly HostedTool[] = HOSTED_TOOLS): ToolEntry[] | undefined {
  if (!body.tools) return undefined;
  const checked = body.tools.map((raw, i): ToolEntry => {
    const at = `tools[${i}]`;
    if (raw.type === 'function') return checkFunction(raw, `/tools/${i}`);
    if (raw.type === 'custom') return checkCustomTool(raw, `/tools/${i}`);
    const tool = hosted.find((t) => t.type === raw.type);
    if (tool) return tool.check(raw as HostedToolEntry, at);
    if ((HOSTED_TOOL_TYPES as readonly string[]).includes(raw.type)) unsupportedTool(raw.type, `${at}.type`);
    throw invalid(
      `Invalid value for '${at}.type': ${JSON.stringify(raw.type)}. Supported values are: 'function', 'custom', ${HOSTED_TOOL_TYPES.map((t) => `'${t}'`).join(', ')}.`,
      `${at}.type`,
      'invalid_value',
    );
  });
  checkNames(checked);
  for (const tool of hosted) {
    const entries = checked.filter((t) => t.type === tool.type) as HostedToolEntry[];
    if (entries.length) tool.checkRequest?.(entries, body);
  }
  return checked;
}

/**
 * Functions and custom tools share one namespace: the model calls either by name, and a call maps back to
 * its tool by it (a custom call to a `custom_tool_call` item), so two client tools of one name are refused.
 */
function checkNames(tools: readonly ToolEntry[]): void {
  const seen = new Set<string>();
  tools.forEach((t, i) => {
    if (t.type !== 'function' && t.type !== 'custom') return;
    const name = (t as FunctionTool | CustomTool).name;
    if (seen.has(name))
      throw invalid(
        `Duplicate tool name '${name}' in 'tools': each function and custom tool needs its own name.`,
        `tools[${i}].name`,
        'invalid_value',
      );
    seen.add(name);
  });
}

/** Checks a `tool_choice` of a hosted type: Standin must run the type, and `tools` must have it. */
export function checkHostedChoice(body: CreateResponseRequest, hosted: readonly HostedTool[] = HOSTED_TOOLS): void {
  const choice = body.tool_choice;
  if (!choice || typeof choice !== 'object' || choice.type === 'function' || choice.type === 'custom' || choice.type === 'allowed_tools')
    return;
  if (!hosted.some((t) => t.type === choice.type)) unsupportedTool(choice.type, 'tool_choice.type');
  if (!body.tools?.some((t) => t.type === choice.type))
    throw invalid(`Tool choice '${choice.type}' not found in 'tools' parameter.`, 'tool_choice', 'invalid_value');
}

/** The hosted types' checks against the store (`HostedTool.admit`), before the response is made. */
export async function admitHosted(
  ctx: Ctx,
  projectId: string,
  body: CreateResponseRequest,
  hosted: readonly HostedTool[] = HOSTED_TOOLS,
): Promise<void> {
  for (const tool of hosted) {
    const entries = (body.tools ?? []).filter((t) => t.type === tool.type) as HostedToolEntry[];
    if (entries.length) await tool.admit?.(entries, ctx, projectId, body);
  }
}

/** A hosted entry as the response echoes it (`HostedTool.echo`: an MCP tool's credentials left out). */
export function echoHosted(entry: HostedToolEntry, hosted: readonly HostedTool[] = HOSTED_TOOLS): HostedToolEntry {
  return hosted.find((t) => t.type === entry.type)?.echo?.(entry) ?? entry;
}

/** Each hosted entry's `checkAccess` (what it names exists in the project), in order. */
export async function checkToolAccess(ctx: Ctx, projectId: string, tools: readonly ToolEntry[] | undefined, hosted = HOSTED_TOOLS) {
  for (const [i, entry] of (tools ?? []).entries()) {
    const tool = hosted.find((t) => t.type === entry.type);
    if (tool?.checkAccess) await tool.checkAccess(entry as HostedToolEntry, ctx, projectId, `tools[${i}]`);
  }
}
