import { ModelError } from './errors.js';
import { fixtureFolder, type FolderOptions } from './fixtures.js';
import type { ChatChunk, ChatProvider as Provider, ChatResult } from './types.js';

/**
 * Upstream answers that are not recorded: the upstream refused the recording's own credentials (401, 407)
 * or its access (403). They say nothing about the exchange, only about the setup that recorded it, and
 * their text is the likeliest to repeat a key.
 */
const UNRECORDED_STATUSES = new Set([401, 403, 407]);

/**
 * The `record` provider: forwards to an upstream provider and writes each exchange to the fixture folder
 * (the pieces as they were passed on, and the result; or the error an upstream answered with a status).
 * A recording that cannot be written fails the call: a run that records nothing would pass unnoticed.
 */
export function createRecordProvider(upstream: Provider, dir: string, opts: FolderOptions): Provider {
  const folder = fixtureFolder(dir, opts);
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
        if (err instanceof ModelError && err.status !== null && !UNRECORDED_STATUSES.has(err.status))
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
      // The cause is the operator's (a read-only folder); the caller is not told server paths.
      opts.log?.error({ err }, 'recording a model exchange failed');
      throw new ModelError('server_error', `Recording the exchange failed (${(err as NodeJS.ErrnoException).code ?? 'see the log'}).`);
    }
  }
}

/**
 * The `replay` provider: answers from the fixture folder, offline and deterministically, passing on the
 * recorded pieces in order, so a streamed caller sees the same chunks. A request with no recording fails
 * with a ModelError `invalid_prompt` naming the request's key.
 */
export function createReplayProvider(dir: string, opts: FolderOptions): Provider {
  const folder = fixtureFolder(dir, opts);
  return {
    name: 'replay',
    async complete(request, onChunk) {
      const exchange = await folder.find(request);
      if (!exchange) throw await folder.miss(request);
      for (const chunk of exchange.chunks) {
        if (request.signal?.aborted) throw (request.signal.reason as Error) ?? new Error('aborted');
        onChunk?.(chunk);
      }
      if (exchange.error) throw new ModelError(exchange.error.code, exchange.error.message, exchange.error.status);
      return exchange.result!;
    },
  };
}
