// Builds a world once, under `standin exec --export-on-exit FILE -- node exec/make-fixture.mjs`: what it
// creates is in FILE when it ends, a fixture to start later runs from (`standin exec --import FILE`).
import OpenAI from 'openai';

const client = new OpenAI({ maxRetries: 0 });
const assistant = await client.beta.assistants.create({
  model: 'gpt-4o',
  name: 'Support bot',
  instructions: 'Answer questions about orders.',
  metadata: { fixture: 'support' },
});
const thread = await client.beta.threads.create({ metadata: { fixture: 'support' } });
await client.beta.threads.messages.create(thread.id, { role: 'user', content: 'Where is order 1234?' });
console.log(`made ${assistant.id} and ${thread.id}`);
