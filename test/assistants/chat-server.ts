import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small Chat Completions server for tests of the upstream provider. It streams like the real protocol
 * (SSE `data:` chunks, text deltas, tool-call deltas split across chunks, a usage chunk, `[DONE]`) and
 * records every request it receives. Behaviour is chosen by the last user message:
 * - contains `call:<name>` → a tool call of `<name>` with arguments `{"q":"<message>"}`, in pieces
 *   (`call:file_search <words>` → `{"query":"<words>"}`, `call:code_interpreter <code>` → `{"code":"<code>"}`,
 *   a function whose one parameter is `input` → `{"input":"<words>"}`);
 * - contains `fail:<status>` → that HTTP status with an error body;
 * - contains `slow` → waits 3 s before answering (for timeouts and cancels);
 * - otherwise → `Upstream says: <message>` in word deltas.
 * After a tool result it answers `Tool said: <output>`, or — when the output holds a file search marker
 * `【m:i†source】` — `Upstream found it<marker>.` (citing the first result).
 */
export interface ChatServer {
  url: string;
  requests: any[];
  close(): Promise<void>;
}

export async function startChatServer(opts: { usage?: boolean } = {}): Promise<ChatServer> {
  const requests: any[] = [];
  const server: Server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const body = JSON.parse(await read(req));
    requests.push({ body, headers: req.headers });
    const messages: any[] = body.messages ?? [];
    const last = messages[messages.length - 1];
    const lastUser = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const fail = /fail:(\d{3})/.exec(lastUser);
    if (fail && last?.role !== 'tool') {
      res
        .writeHead(Number(fail[1]), { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: `failing as asked (${fail[1]})`, type: 'test' } }));
      return;
    }
    if (/slow/.test(lastUser)) await new Promise((r) => setTimeout(r, 3000));
    const id = 'chatcmpl-test';
    const base = { id, object: 'chat.completion.chunk', created: 1, model: body.model };
    const frames: unknown[] = [];
    const call = /call:([A-Za-z0-9_-]+)/.exec(lastUser);
    let text: string | null = null;
    let toolCall: { id: string; name: string; args: string } | null = null;
    const marker = last?.role === 'tool' ? /【\d+:\d+†[^】]*】/.exec(last.content ?? '') : null;
    if (marker) text = `Upstream found it${marker[0]}.`;
    else if (last?.role === 'tool') text = `Tool said: ${last.content}`;
    else if (call) {
      const rest = lastUser.replace(call[0], '').trim();
      // A function of one string `input` (a custom tool of /v1/responses) is given the rest as its input.
      const takesInput = (body.tools ?? []).some((t: any) => t.function?.name === call[1] && t.function.parameters?.properties?.input);
      const args =
        call[1] === 'file_search'
          ? { query: rest }
          : call[1] === 'code_interpreter'
            ? { code: rest }
            : takesInput
              ? { input: rest }
              : { q: lastUser };
      toolCall = { id: 'call_up_1', name: call[1], args: JSON.stringify(args) };
    } else text = `Upstream says: ${lastUser}`;
    if (!body.stream) {
      const message: any = { role: 'assistant', content: text };
      if (toolCall)
        message.tool_calls = [{ id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: toolCall.args } }];
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          choices: [{ index: 0, message, finish_reason: toolCall ? 'tool_calls' : 'stop' }],
          usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
        }),
      );
      return;
    }
    frames.push({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    if (text !== null) {
      let max = body.max_tokens ?? Infinity;
      const words = text.split(/(?<= )/);
      let finish = 'stop';
      for (const w of words) {
        if (max-- <= 0) {
          finish = 'length';
          break;
        }
        frames.push({ ...base, choices: [{ index: 0, delta: { content: w }, finish_reason: null }] });
      }
      frames.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    } else if (toolCall) {
      const half = Math.floor(toolCall.args.length / 2);
      frames.push({
        ...base,
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: '' } }] },
            finish_reason: null,
          },
        ],
      });
      frames.push({
        ...base,
        choices: [
          { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: toolCall.args.slice(0, half) } }] }, finish_reason: null },
        ],
      });
      frames.push({
        ...base,
        choices: [
          { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: toolCall.args.slice(half) } }] }, finish_reason: null },
        ],
      });
      frames.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
    }
    if (opts.usage !== false && body.stream_options?.include_usage)
      frames.push({ ...base, choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const f of frames) {
      res.write(`data: ${JSON.stringify(f)}\n\n`);
      await new Promise((r) => setImmediate(r));
    }
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c) => (data += c));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}
