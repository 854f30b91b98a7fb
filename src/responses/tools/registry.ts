import { codeInterpreterTool } from './code-interpreter.js';
import { fileSearchTool } from './file-search.js';
import type { HostedTool } from './hosted.js';
import { mcpTool } from './mcp-tool.js';

/**
 * The hosted tool types Standin runs on /v1/responses, one line each (tools/hosted.ts). A type of the
 * document that is not here is refused by name (tools/check.ts; the table in docs/responses.md).
 */
export const HOSTED_TOOLS: readonly HostedTool<any>[] = [fileSearchTool, codeInterpreterTool, mcpTool];

/** The hosted tool of a `tools[i].type`, if Standin runs it. */
export const hostedTool = (type: string, tools: readonly HostedTool[] = HOSTED_TOOLS): HostedTool | undefined =>
  tools.find((t) => t.type === type);
