import { hostname } from 'node:os';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Principal } from '../core/auth.js';
import type { Ctx } from '../core/module.js';
import { UNMATCHED } from './registry.js';

type Observer = (request: FastifyRequest, reply: FastifyReply) => void;

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
  return (request, reply) => {
    // Read once for both: Fastify builds the routeOptions object anew at each read.
    const route = request.routeOptions.url ?? UNMATCHED;
    metrics?.observe(request, reply, route);
    if (lines) stream.write(line(request, reply, route));
  };
}

/**
 * What an operator needs of a request, and no secret: the route template, never the URL (its query may
 * hold a key). The line is pino's (level, time, pid, hostname, then the fields, then msg), composed here
 * rather than by pino's serializer from an object: a fifth of the cost of the line on the smallest read
 * (bench/metrics.mjs). It goes to the logger's own destination, in order with every other line.
 */
function requestLine(): (request: FastifyRequest, reply: FastifyReply, route: string) => string {
  const bindings = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
  const str = JSON.stringify;
  return (request, reply, route) => {
    const principal = (request as FastifyRequest & { principal?: Principal | null }).principal;
    const project = principal?.kind === 'platform' ? str(principal.projectId) : 'null';
    const ms = Math.round(reply.elapsedTime * 100) / 100;
    // A log line's time is the wall clock, as in pino's own lines, never the movable Standin clock.
    // eslint-disable-next-line no-restricted-syntax
    const time = Date.now();
    return `{"level":30,"time":${time}${bindings},"reqId":${str(request.id)},"method":${str(request.method)},"route":${str(route)},"status":${reply.statusCode},"ms":${ms},"project":${project},"msg":"request"}\n`;
  };
}
