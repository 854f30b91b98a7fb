import { readFileSync } from 'node:fs';
import OpenAI6, { toFile as toFile6 } from 'openai';
import OpenAI4, { toFile as toFile4 } from 'openai-v4';
import OpenAI5, { toFile as toFile5 } from 'openai-v5';
import OpenAI7, { toFile as toFile7 } from 'openai-v7';

/**
 * The SDK majors of the matrix, and the ONE place that says where they shape a call differently. From
 * 5.x on, a nested resource is addressed by its own id with its parents in the params
 * (`runs.retrieve(runId, { thread_id })`) and `del` is `delete`; 4.x takes the ids positionally
 * (`runs.retrieve(threadId, runId)`). Everything else is called the same way on every major, straight on
 * `client`. The client is untyped here: four majors' types do not meet, and what the suite checks is the
 * wire, against what the API returns.
 */
export interface Sdk {
  major: 4 | 5 | 6 | 7;
  version: string;
  client: any;
  toFile(data: Buffer, name: string): Promise<unknown>;
  del(resource: any, id: string): Promise<any>;
  message: {
    retrieve(threadId: string, messageId: string): Promise<any>;
    update(threadId: string, messageId: string, body: object): Promise<any>;
    del(threadId: string, messageId: string): Promise<any>;
  };
  run: {
    retrieve(threadId: string, runId: string): Promise<any>;
    update(threadId: string, runId: string, body: object): Promise<any>;
    cancel(threadId: string, runId: string): Promise<any>;
    submitToolOutputs(threadId: string, runId: string, body: object): Promise<any>;
    submitToolOutputsAndPoll(threadId: string, runId: string, body: object): Promise<any>;
    submitToolOutputsStream(threadId: string, runId: string, body: object): any;
  };
  step: {
    list(threadId: string, runId: string, query?: object): any;
    retrieve(threadId: string, runId: string, stepId: string, query?: object): Promise<any>;
  };
  vectorStoreFile: {
    retrieve(storeId: string, fileId: string): Promise<any>;
    del(storeId: string, fileId: string): Promise<any>;
    /** The file's extracted text: a page (`for await` gives its items). */
    content(storeId: string, fileId: string): any;
    /** The files of a file batch. */
    ofBatch(storeId: string, batchId: string): any;
  };
}

const POLL = { pollIntervalMs: 20 };

function positional(major: 4, version: string, client: any, toFile: Sdk['toFile']): Sdk {
  const runs = client.beta.threads.runs;
  const messages = client.beta.threads.messages;
  return {
    major,
    version,
    client,
    toFile,
    del: (resource, id) => resource.del(id),
    message: {
      retrieve: (t, m) => messages.retrieve(t, m),
      update: (t, m, body) => messages.update(t, m, body),
      del: (t, m) => messages.del(t, m),
    },
    run: {
      retrieve: (t, r) => runs.retrieve(t, r),
      update: (t, r, body) => runs.update(t, r, body),
      cancel: (t, r) => runs.cancel(t, r),
      submitToolOutputs: (t, r, body) => runs.submitToolOutputs(t, r, body),
      submitToolOutputsAndPoll: (t, r, body) => runs.submitToolOutputsAndPoll(t, r, body, POLL),
      submitToolOutputsStream: (t, r, body) => runs.submitToolOutputsStream(t, r, body),
    },
    step: {
      list: (t, r, query) => runs.steps.list(t, r, query),
      retrieve: (t, r, s, query) => runs.steps.retrieve(t, r, s, query),
    },
    vectorStoreFile: {
      retrieve: (vs, f) => client.vectorStores.files.retrieve(vs, f),
      del: (vs, f) => client.vectorStores.files.del(vs, f),
      content: (vs, f) => client.vectorStores.files.content(vs, f),
      ofBatch: (vs, b) => client.vectorStores.fileBatches.listFiles(vs, b),
    },
  };
}

function named(major: 5 | 6 | 7, version: string, client: any, toFile: Sdk['toFile']): Sdk {
  const runs = client.beta.threads.runs;
  const messages = client.beta.threads.messages;
  return {
    major,
    version,
    client,
    toFile,
    del: (resource, id) => resource.delete(id),
    message: {
      retrieve: (t, m) => messages.retrieve(m, { thread_id: t }),
      update: (t, m, body) => messages.update(m, { thread_id: t, ...body }),
      del: (t, m) => messages.delete(m, { thread_id: t }),
    },
    run: {
      retrieve: (t, r) => runs.retrieve(r, { thread_id: t }),
      update: (t, r, body) => runs.update(r, { thread_id: t, ...body }),
      cancel: (t, r) => runs.cancel(r, { thread_id: t }),
      submitToolOutputs: (t, r, body) => runs.submitToolOutputs(r, { thread_id: t, ...body }),
      submitToolOutputsAndPoll: (t, r, body) => runs.submitToolOutputsAndPoll(r, { thread_id: t, ...body }, POLL),
      submitToolOutputsStream: (t, r, body) => runs.submitToolOutputsStream(r, { thread_id: t, ...body }),
    },
    step: {
      list: (t, r, query) => runs.steps.list(r, { thread_id: t, ...query }),
      retrieve: (t, r, s, query) => runs.steps.retrieve(s, { thread_id: t, run_id: r, ...query }),
    },
    vectorStoreFile: {
      retrieve: (vs, f) => client.vectorStores.files.retrieve(f, { vector_store_id: vs }),
      del: (vs, f) => client.vectorStores.files.delete(f, { vector_store_id: vs }),
      content: (vs, f) => client.vectorStores.files.content(f, { vector_store_id: vs }),
      ofBatch: (vs, b) => client.vectorStores.fileBatches.listFiles(b, { vector_store_id: vs }),
    },
  };
}

// Each alias's own package.json: what npm installed, read from disk (their exports hide it from import).
const version = (pkg: string): string =>
  JSON.parse(readFileSync(new URL(`../../node_modules/${pkg}/package.json`, import.meta.url), 'utf8')).version;

/** The majors the matrix runs, each with a client of `baseURL` (no retries: a failure shows at once). */
export function sdks(baseURL: string, apiKey: string): Sdk[] {
  const opts = { baseURL, apiKey, maxRetries: 0 };
  return [
    positional(4, version('openai-v4'), new OpenAI4(opts), toFile4),
    named(5, version('openai-v5'), new OpenAI5(opts), toFile5),
    named(6, version('openai'), new OpenAI6(opts), toFile6),
    named(7, version('openai-v7'), new OpenAI7(opts), toFile7),
  ];
}

/** The majors by name, for describe.each before any Standin runs. */
export const MAJORS = [4, 5, 6, 7] as const;
