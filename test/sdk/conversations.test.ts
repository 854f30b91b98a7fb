import OpenAI6, { toFile as toFile6 } from 'openai';
import OpenAI7, { toFile as toFile7 } from 'openai-v7';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdf, png } from '../media.js';
import { dialects, startTestStandin, type TestStandin } from '../helpers.js';

/**
 * Issue 35 (inputs and state): the Conversations API, `conversation` on a response, input items, and
 * image, file, item_reference and function call inputs, through the `openai` SDK 6.x and 7.x. What the
 * SDK's auto-pagination walks equals the list read in one page.
 */
const CLIENTS = [
  { name: 'openai 6', make: (baseURL: string, apiKey: string) => new OpenAI6({ baseURL, apiKey }), toFile: toFile6 },
  { name: 'openai 7', make: (baseURL: string, apiKey: string) => new OpenAI7({ baseURL, apiKey }) as unknown as OpenAI6, toFile: toFile7 },
];

async function all<T>(list: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of list) out.push(item);
  return out;
}

describe.each(dialects())('conversations and response inputs through the openai SDK (%s)', (dialect) => {
  let s: TestStandin;
  let base: string;
  beforeAll(async () => {
    s = await startTestStandin({ dialect });
    base = `${await s.listen()}/v1`;
  });
  afterAll(() => s?.close());

  describe.each(CLIENTS)('$name', ({ make, toFile }) => {
    const client = () => make(base, s.keys.platform);

    it('conversations: create, retrieve, update, items (auto-paginated), delete', async () => {
      const c = client();
      const conv = await c.conversations.create({
        metadata: { topic: 'demo' },
        items: [{ type: 'message', role: 'user', content: 'Hello!' }],
      });
      expect(conv).toMatchObject({ object: 'conversation', metadata: { topic: 'demo' } });
      expect(await c.conversations.retrieve(conv.id)).toEqual(conv);
      expect((await c.conversations.update(conv.id, { metadata: { topic: 'new' } })).metadata).toEqual({ topic: 'new' });
      const added = await c.conversations.items.create(conv.id, {
        items: Array.from({ length: 6 }, (_, i) => ({ type: 'message' as const, role: 'user' as const, content: `m${i}` })),
      });
      expect(added.data).toHaveLength(6);
      const walked = await all(c.conversations.items.list(conv.id, { limit: 2, order: 'asc', include: ['message.input_image.image_url'] }));
      const whole = await c.conversations.items.list(conv.id, { limit: 100, order: 'asc' });
      expect(walked).toEqual(whole.data);
      expect(walked).toHaveLength(7);
      const item = await c.conversations.items.retrieve(added.data[0].id!, { conversation_id: conv.id });
      expect(item).toEqual(added.data[0]);
      expect((await c.conversations.items.delete(added.data[0].id!, { conversation_id: conv.id })).id).toBe(conv.id);
      expect(await c.conversations.delete(conv.id)).toMatchObject({ id: conv.id, deleted: true });
      await expect(c.conversations.retrieve(conv.id)).rejects.toMatchObject({ status: 404 });
    });

    it('a response in a conversation, its input items, image and file inputs', async () => {
      const c = client();
      const conv = await c.conversations.create({ items: [{ type: 'message', role: 'user', content: 'Remember: the code is 7731.' }] });
      const file = await c.files.create({
        file: await toFile(pdf('Quarterly revenue grew nine percent.'), 'report.pdf'),
        purpose: 'user_data',
      });
      const image = `data:image/png;base64,${png(32, 16).toString('base64')}`;
      const r = await c.responses.create({
        model: 'gpt-4o-mini',
        conversation: conv.id,
        input: [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: 'Describe these.' },
              { type: 'input_image', image_url: image, detail: 'auto' },
              { type: 'input_file', file_id: file.id },
            ],
          },
        ],
      });
      expect(r.conversation).toEqual({ id: conv.id });
      expect(r.output_text).toContain('[image: image/png, 32x16 pixels]');
      expect(r.output_text).toContain('Quarterly revenue grew nine percent.');
      const inputs = await all(c.responses.inputItems.list(r.id, { limit: 1 }));
      expect(inputs).toEqual((await c.responses.inputItems.list(r.id)).data);
      expect(inputs).toMatchObject([
        {
          type: 'message',
          role: 'user',
          content: [{ type: 'input_text' }, { type: 'input_image' }, { type: 'input_file', file_id: file.id }],
        },
      ]);
      const items = (await c.conversations.items.list(conv.id, { order: 'asc' })).data;
      expect(items.map((i) => i.type)).toEqual(['message', 'message', 'message']);
      expect(items[2]).toEqual(r.output[0]);
      const counted = await c.responses.inputTokens.count({ model: 'gpt-4o-mini', conversation: conv.id, input: 'next' });
      expect(counted.input_tokens).toBeGreaterThan(0);
    });

    it('item_reference and a function call round trip, the items passed back', async () => {
      const c = client();
      const tools = [
        {
          type: 'function' as const,
          name: 'get_weather',
          strict: false,
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      ];
      const first = await c.responses.create({
        model: 'gpt-4o-mini',
        input: 'what is the weather? call get_weather',
        tools,
        tool_choice: 'required',
      });
      const call = first.output.find((o) => o.type === 'function_call');
      expect(call).toMatchObject({ type: 'function_call', name: 'get_weather' });
      if (call?.type !== 'function_call') throw new Error('no call');
      const second = await c.responses.create({
        model: 'gpt-4o-mini',
        tools,
        input: [
          { role: 'user', content: 'what is the weather? call get_weather' },
          call,
          { type: 'function_call_output', call_id: call.call_id, output: 'sunny' },
        ],
      });
      expect(second.output_text).toContain('sunny');
      const third = await c.responses.create({
        model: 'gpt-4o-mini',
        tools,
        input: [
          { role: 'user', content: 'what is the weather? call get_weather' },
          { type: 'item_reference', id: call.id! },
          { type: 'function_call_output', call_id: call.call_id, output: 'snow' },
        ],
      });
      expect(third.output_text).toContain('snow');
      const listed = (await c.responses.inputItems.list(third.id, { order: 'asc' })).data;
      expect(listed[1]).toEqual(call);
    });
  });
});
