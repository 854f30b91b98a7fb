/**
 * One log line per outage instead of one per attempt: the first failure is logged (its message, not its
 * stack: the stack of the hundredth failed claim says nothing the first did not), the failures after it
 * only counted, and the first success after them logs the end with `failures` and `down_ms`. A 12 s
 * PostgreSQL outage is then two lines per kind of failure, not one a second per job kind.
 */
export interface OutageLog {
  failed(err: unknown, fields?: Record<string, unknown>): void;
  ok(): void;
}

/** An outage log for one kind of failure (`what`: "claiming jobs"), at `error` when it starts and `warn` when it ends. */
export function outageLog(
  log: { error: (o: unknown, msg: string) => void; warn: (o: unknown, msg: string) => void },
  what: string,
): OutageLog {
  let since: number | undefined;
  let failures = 0;
  return {
    failed(err, fields = {}) {
      failures++;
      if (since !== undefined) return;
      since = performance.now();
      const reason = err instanceof Error ? err.message : String(err);
      log.error({ ...fields, reason }, `${what} failed; retrying, and logging once when it works again`);
    },
    ok() {
      if (since === undefined) return;
      log.warn({ failures, down_ms: Math.round(performance.now() - since) }, `${what} works again after ${failures} failed attempts`);
      since = undefined;
      failures = 0;
    },
  };
}
