import { hostname } from 'node:os';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Principal } from '../core/auth.js';
import { wallNow } from '../core/clock.js';
import type { Ctx } from '../core/module.js';
import { UNMATCHED } from './registry.js';

type Observer = (request: FastifyRequest, reply: FastifyReply, route: string | undefined) => void;

/**
 * What is done with every finished request: its log line (info) and its metrics, each when its setting is
 * on; undefined when both are off. The app's request log controller calls it, Fastify's own call at the
 * end of each request: an onResponse hook cost more than the line and the metrics together (bench/metrics.mjs).
 */
export function responseObserver(ctx: Ctx, log: FastifyBaseLogger, stream: DestinationStream): Observer | undefined {
  const metrics = ctx.settings.metrics ? ctx.services.metrics : undefined;
  const lines = ctx.settings.logRequests && ['trace', 'debug', 'info'].includes(log.level);
  if (!metrics && !lines) return undefined;
  const line = requestLine();
  // A name: bench/metrics.mjs finds it in a CPU profile.
  return function observeResponse(request, reply, template) {
    // The log controller read the template (Fastify builds the routeOptions object anew at each read).
    const route = template ?? UNMATCHED;
    metrics?.observe(request, reply, route);
    if (lines) stream.write(line(request, reply, route));
  };
}

/**
 * What an operator needs of a request, and no secret: the route template, never the URL (its query may
 * hold a key). The line is pino's (level, time, pid, hostname, then the fields, then msg), composed here
 * rather than by pino's serializer from an object: a fifth of the cost of the line on the smallest read
 * (bench/metrics.mjs). The part that depends on the route and method only is made once for each; numbers
 * are written from integers (a fraction's shortest form costs more than the rest of the line). It goes to
 * the logger's own destination, in order with every other line.
 */
function requestLine(): (request: FastifyRequest, reply: FastifyReply, route: string) => string {
  // The request id is Standin's own (`req_` and hex digits, app.ts): quoted, it is JSON as it is.
  const bindings = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())},"reqId":"`;
  const str = JSON.stringify;
  // Bounded: routes are templates (or UNMATCHED), methods those Node's parser accepts.
  const middles = new Map<string, Map<string, string>>();
  const middleOf = (route: string, method: string) => {
    let methods = middles.get(route);
    if (!methods) middles.set(route, (methods = new Map()));
    let middle = methods.get(method);
    if (middle === undefined) methods.set(method, (middle = `,"method":${str(method)},"route":${str(route)},"status":`));
    return middle;
  };
  return (request, reply, route) => {
    const principal = (request as FastifyRequest & { principal?: Principal | null }).principal;
    const project = principal?.kind === 'platform' ? str(principal.projectId) : 'null';
    // A log line's time is the wall clock, as in pino's own lines, never the movable Standin clock.
    const time = wallNow();
    return `{"level":30,"time":${time}${bindings}${request.id}"${middleOf(route, request.method)}${reply.statusCode},"ms":${hundredths(reply.elapsedTime)},"project":${project},"msg":"request"}\n`;
  };
}

/** `ms` rounded to hundredths, as JSON writes Math.round(ms * 100) / 100 (`1.5`, `0.07`, `12`), from integers. */
export function hundredths(ms: number): string {
  const h = Math.round(ms * 100);
  if (!(h >= 0 && h < 1e15)) return String(h / 100);
  const whole = Math.floor(h / 100);
  const cents = h - whole * 100;
  if (cents === 0) return `${whole}`;
  if (cents % 10 === 0) return `${whole}.${cents / 10}`;
  return cents < 10 ? `${whole}.0${cents}` : `${whole}.${cents}`;
}
