import OpenAI, { toFile } from 'openai';
import { Webhook } from 'standardwebhooks';
import type { Batch } from 'openai/resources/batches';
import type { startReceiver } from '../webhooks/receiver.js';

/** One JSONL request line of a batch input file. */
export const chatLine = (customId: string, content: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    custom_id: customId,
    method: 'POST',
    url: '/v1/chat/completions',
    body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra },
  });

/** Uploads JSONL lines as a file of purpose `batch`. */
export async function uploadBatchFile(client: OpenAI, lines: string[], name = 'input.jsonl'): Promise<string> {
  const file = await client.files.create({ file: await toFile(Buffer.from(`${lines.join('\n')}\n`), name), purpose: 'batch' });
  return file.id;
}

const TERMINAL = ['completed', 'failed', 'expired', 'cancelled'];

/** Polls a batch until `until` holds (default: it ended). */
export async function waitFor(
  client: OpenAI,
  id: string,
  until: (b: Batch) => boolean = (b) => TERMINAL.includes(b.status),
  timeoutMs = 60_000,
) {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const b = await client.batches.retrieve(id);
    if (until(b)) return b;
    if (performance.now() > deadline) throw new Error(`batch ${id} is still ${b.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The JSONL lines of a file, parsed. */
export async function fileLines(client: OpenAI, id: string): Promise<any[]> {
  const text = await (await client.files.content(id)).text();
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

/** The webhook event about `batchId`, verified with standardwebhooks. */
export async function verifiedEvent(rx: Awaited<ReturnType<typeof startReceiver>>, secret: string, batchId: string) {
  const wh = new Webhook(secret);
  for (let i = 0; i < 1000; i++) {
    for (const r of rx.received) {
      const e = wh.verify(r.body, r.headers as Record<string, string>) as { type: string; data: { id: string } };
      if (e.data.id === batchId) return e;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no event for ${batchId}`);
}
