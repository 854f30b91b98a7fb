import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { callToolRaw, listAllTools, readTemplate, templateUri } from '../mcp.js';
import { lintDescriptors, type LintInput, type SampleCall, type ToolDescriptor } from './descriptor.js';
import type { Finding } from './findings.js';

export interface ServerLintOptions {
  vendor: string;
  submission: boolean;
  /** Explicit sample calls: tool name and arguments. */
  samples?: { tool: string; arguments: Record<string, unknown> }[];
  /**
   * Also call each tool that declares itself read-only and not destructive and needs no arguments, with `{}`,
   * so its structuredContent can be checked against its outputSchema.
   */
  autoSamples?: boolean;
  /** `_meta` sent with sample calls (the client metadata of the spec). */
  callMeta?: Record<string, unknown>;
}

export interface ServerLintResult {
  tools: ToolDescriptor[];
  findings: Finding[];
  input: LintInput;
}

/** Lists tools, reads their templates, makes the sample calls, then lints all of it. */
export async function lintServer(client: Client, opts: ServerLintOptions): Promise<ServerLintResult> {
  const tools = await listAllTools(client);
  const resources: LintInput['resources'] = {};
  for (const t of tools) {
    const uri = templateUri(t, opts.vendor);
    if (uri && !resources[uri]) resources[uri] = await readTemplate(client, uri);
  }
  const wanted = [...(opts.samples ?? [])];
  if (opts.autoSamples) {
    for (const t of tools) {
      const a = t.annotations ?? {};
      const needsArgs = Array.isArray(t.inputSchema?.required) && t.inputSchema.required.length > 0;
      if (a.readOnlyHint === true && a.destructiveHint !== true && !needsArgs && !wanted.some((w) => w.tool === t.name))
        wanted.push({ tool: t.name, arguments: {} });
    }
  }
  const samples: SampleCall[] = [];
  for (const w of wanted) {
    try {
      const result = await callToolRaw(client, w.tool, w.arguments, opts.callMeta);
      samples.push({ ...w, result });
    } catch (err) {
      samples.push({ ...w, error: (err as Error).message });
    }
  }
  const input: LintInput = { tools, resources, samples };
  return { tools, input, findings: lintDescriptors(input, { vendor: opts.vendor, submission: opts.submission }) };
}
