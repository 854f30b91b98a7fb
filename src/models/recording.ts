import { ModelError } from './errors.js';
import { fixtureFolder } from './fixtures.js';
import type { ChatChunk, ChatProvider as Provider, ChatResult } from './types.js';

/**
 * The `record` provider: forwards to an upstream provider and writes each exchange to the fixture folder
 * (the pieces as they were passed on, and the result; or the error an upstream answered with a status).
 * A recording that cannot be written fails the call: a run that records nothing would pass unnoticed.
 */
export function createRecordProvider(upstream: Provider, dir: string): Provider {
  const folder = fixtureFolder(dir);
  return {
    name: 'record',
    async complete(request, onChunk) {
      const chunks: ChatChunk[] = [];
      let result: ChatResult;
      try {
        result = await upstream.complete(request, (chunk) => {
          chunks.push(chunk);
          onChunk?.(chunk);
        });
      } catch (err) {
        // An answer of the upstream (429, 400, 5xx) is part of the exchange; a timeout or a cancel is not.
        if (err instanceof ModelError && err.status !== null)
          await save(() => folder.write(request, { chunks, error: { code: err.code, message: err.message, status: err.status } }));
        throw err;
      }
      await save(() => folder.write(request, { chunks, result }));
      return result;
    },
  };

  async function save(write: () => Promise<unknown>) {
    try {
      await write();
    } catch (err) {
      throw new ModelError('server_error', `Recording the exchange to ${dir} failed: ${(err as Error).message}`);
    }
  }
}

/**
 * The `replay` provider: answers from the fixture folder, offline and deterministically, passing on the
 * recorded pieces in order, so a streamed caller sees the same chunks. A request with no recording fails
 * with a ModelError `invalid_prompt` naming the request's key and the nearest recording.
 */
export function createReplayProvider(dir: string): Provider {
  const folder = fixtureFolder(dir);
  return {
    name: 'replay',
    async complete(request, onChunk) {
      const exchange = await folder.find(request);
      if (!exchange) throw new ModelError('invalid_prompt', await folder.missMessage(request));
      for (const chunk of exchange.chunks) {
        if (request.signal?.aborted) throw (request.signal.reason as Error) ?? new Error('aborted');
        onChunk?.(chunk);
      }
      if (exchange.error) throw new ModelError(exchange.error.code, exchange.error.message, exchange.error.status);
      if (!exchange.result) throw new ModelError('server_error', `The recording of key ${exchange.key} in ${dir} holds no result.`);
      return exchange.result;
    },
  };
}
