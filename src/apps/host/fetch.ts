import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { undici, type Outbound } from '../../core/outbound.js';

/** How long an MCP server may take to answer a request's headers (a tool call's own limit is 60 s). */
const HEADERS_TIMEOUT_MS = 120_000;

/**
 * The fetch of the host's MCP transports: every connection goes through the guarded dispatcher of
 * `ctx.outbound` (its address check runs at connect time, after DNS, on each redirect hop too), so the host
 * reaches what webhooks and JWKS may reach and nothing else. Unlike `outbound.fetch` it sets no total time
 * limit and no idle limit on bodies: an MCP event stream stays open for the whole connection, and the MCP
 * client times its own requests.
 */
export function mcpFetch(outbound: Outbound): FetchLike {
  // Composed on the first call: the guarded agent (and undici) load on first use, not at start.
  let dispatcher: ReturnType<Outbound['dispatcher']['compose']> | undefined;
  return (url, init) => {
    dispatcher ??= outbound.dispatcher.compose(
      (dispatch) => (opts, handler) => dispatch({ ...opts, headersTimeout: HEADERS_TIMEOUT_MS, bodyTimeout: 0 }, handler),
    );
    return undici().fetch(url, { ...(init as object), dispatcher } as Parameters<
      ReturnType<typeof undici>['fetch']
    >[1]) as unknown as Promise<Response>;
  };
}
