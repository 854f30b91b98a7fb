import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Clock } from '../core/clock.js';

/** The recent requests the control plane shows (method, path, status, duration, request id), secrets redacted. */
export interface LoggedRequest {
  id: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  at: number;
}

const SECRET_PARAMS = /([?&](?:key|api_key|token|access_token|secret|subject_token|client_secret|sig)=)[^&]*/gi;

/** Removes secret-looking query values from a URL. */
export const redactUrl = (url: string) => (url.includes('=') ? url.replace(SECRET_PARAMS, '$1[redacted]') : url);

export class RequestLog {
  private items: LoggedRequest[] = [];
  private next = 0;
  constructor(private readonly capacity = 1000) {}

  add(item: LoggedRequest): void {
    if (this.items.length < this.capacity) this.items.push(item);
    else this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
  }

  /** Newest first. */
  recent(limit = 100): LoggedRequest[] {
    const ordered =
      this.items.length < this.capacity ? this.items.slice() : [...this.items.slice(this.next), ...this.items.slice(0, this.next)];
    return ordered.reverse().slice(0, limit);
  }

  clear(): void {
    this.items = [];
    this.next = 0;
  }
}

/**
 * Fastify's request logging, pointed at the request log: every completed request is recorded there, and
 * nothing is logged line by line. Fastify calls it for every finished reply when it has a logger, so the
 * log needs no onResponse hook (a hook costs more per request than the recording itself).
 */
export class RequestLogController extends LogController {
  constructor(
    private readonly requestLog: RequestLog,
    private readonly clock: Clock,
  ) {
    super({ disableRequestLogging: true });
  }

  override requestCompleted(_error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (request.url === '/healthz') return;
    this.requestLog.add({
      id: request.id,
      method: request.method,
      path: redactUrl(request.url),
      status: reply.statusCode,
      duration_ms: Math.round(reply.elapsedTime * 100) / 100,
      at: this.clock.nowSeconds(),
    });
  }
}
