import { describe, expect, it } from 'vitest';
import { createClock } from '../../core/clock.js';
import type { Ctx } from '../../core/module.js';
import { createBuiltinProvider } from '../../models/builtin.js';
import { compileModelsConfig } from '../../models/config.js';
import type { ChatRequest } from '../../models/types.js';
import { ResponseWriter, type StreamEvent } from '../events.js';
import type { CreateResponseRequest, ResponseObject } from '../schemas.js';
import type { HostedContext, HostedTool } from './hosted.js';
import { runLoop } from './loop.js';

const [route] = compileModelsConfig({ m: { provider: 'builtin' } as never });
const builtin = createBuiltinProvider(route.builtin!);

/** A hosted tool of the test's own: one function, `lookup`, whose calls it records and answers. */
function lookupTool(stop = false) {
  const seen: { name: string; args: string }[] = [];
  const tool: HostedTool = {
    type: 'lookup',
    check: (raw) => raw,
    functions: () => [{ function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
    async call(_entry, name, args, hctx) {
      seen.push({ name, args });
      const index = hctx.writer.addItem({ id: 'mcp_1', type: 'mcp_call', status: 'in_progress', arguments: args });
      hctx.writer.event('response.lookup.searching', { output_index: index });
      hctx.writer.updateItem(index, { status: 'completed' });
      hctx.writer.doneItem(index);
      return { output: 'the key is under the mat', stop };
    },
  };
  return { tool, seen };
}

function setup(body: Partial<CreateResponseRequest>, stream = false) {
  const clock = createClock();
  const events: StreamEvent[] = [];
  const requests: ChatRequest[] = [];
  const response = { id: 'resp_1', status: 'in_progress', output: [] } as unknown as ResponseObject;
  const writer = new ResponseWriter(response, clock, stream ? (e) => events.push(e) : undefined);
  const models = {
    complete: (r: ChatRequest, c?: Parameters<typeof builtin.complete>[1]) => (
      requests.push(structuredClone({ ...r, signal: undefined })),
      builtin.complete(r, c)
    ),
  };
  const ctx = { clock, services: { models } } as unknown as Ctx;
  const full = { model: 'm', input: 'x', ...body } as CreateResponseRequest;
  const hctx: HostedContext = { ctx, projectId: 'p', body: full, writer, include: new Set(), model: 'm', state: new Map() };
  const base: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'where is the key' }], tool_choice: 'auto' };
  return { hctx, base, events, requests };
}

describe('the hosted tool loop', () => {
  it('runs a hosted call, feeds its output back, and lets the model answer', async () => {
    const { tool, seen } = lookupTool();
    const { hctx, base, events, requests } = setup({ tools: [{ type: 'lookup' }], tool_choice: { type: 'lookup' } as never }, true);
    const end = await runLoop(hctx, base, true, [tool]);
    expect(seen).toEqual([{ name: 'lookup', args: expect.any(String) }]);
    expect(requests).toHaveLength(2);
    expect(requests[0].tool_choice).toEqual({ type: 'function', function: { name: 'lookup' } });
    expect(requests[1].tool_choice).toBe('auto');
    expect(requests[1].messages.at(-1)).toEqual({ role: 'tool', tool_call_id: expect.any(String), content: 'the key is under the mat' });
    expect(end.done.output.map((o) => o.type)).toEqual(['mcp_call', 'message']);
    expect(end.done.status).toBe('completed');
    expect(end.rounds.map((m) => m.role)).toEqual(['assistant', 'tool']);
    // The usage counts both model calls.
    expect(end.done.usage!.input_tokens).toBeGreaterThan(0);
    expect(end.result.usage.prompt_tokens).toBeGreaterThan(requests.length);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual([
      'response.output_item.added',
      'response.lookup.searching',
      'response.output_item.done',
      'response.output_item.added',
    ]);
    expect(types.at(-1)).toBe('response.completed');
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    // No function_call item is written for a hosted call.
    expect(events.some((e) => (e.item as { type?: string } | undefined)?.type === 'function_call')).toBe(false);
  });

  it('ends the turn when a call says stop, with no answer', async () => {
    const { tool } = lookupTool(true);
    const { hctx, base, requests } = setup({ tools: [{ type: 'lookup' }], tool_choice: { type: 'lookup' } as never });
    const end = await runLoop(hctx, base, false, [tool]);
    expect(requests).toHaveLength(1);
    expect(end.done.output.map((o) => o.type)).toEqual(['mcp_call']);
    expect(end.result).toMatchObject({ content: null, tool_calls: [], finish_reason: 'stop' });
  });

  it('renames a hosted function whose name a client function has, and calls the tool by its own name', async () => {
    const { tool, seen } = lookupTool();
    const { hctx, base, requests } = setup({ tools: [{ type: 'lookup' }], tool_choice: { type: 'lookup' } as never });
    const client = { type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object' } } };
    await runLoop(hctx, { ...base, tools: [client] }, false, [tool]);
    expect(requests[0].tools!.map((t) => t.function.name)).toEqual(['lookup', 'lookup_2']);
    expect(requests[0].tool_choice).toEqual({ type: 'function', function: { name: 'lookup_2' } });
    expect(seen.map((s) => s.name)).toEqual(['lookup']);
  });

  it('offers no hosted function once max_tool_calls calls ran, nor in the last round', async () => {
    const { tool } = lookupTool();
    const { hctx, base, requests } = setup({ tools: [{ type: 'lookup' }], tool_choice: { type: 'lookup' } as never, max_tool_calls: 1 });
    await runLoop(hctx, base, false, [tool]);
    expect(requests).toHaveLength(2);
    expect(requests[1].tools).toBeUndefined();
  });
});
