import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { routeConfigOf, type RouteConfig } from './route-path.js';

describe('routeConfigOf', () => {
  it("answers what request.routeOptions.config does, from Fastify's route context, and undefined when no route matched", async () => {
    const app = Fastify();
    const seen: { fast: RouteConfig | undefined; getter: unknown; is404: boolean; symbol: boolean }[] = [];
    const look = (request: Parameters<typeof routeConfigOf>[0]) =>
      seen.push({
        fast: routeConfigOf(request),
        getter: request.is404 ? undefined : request.routeOptions.config,
        is404: request.is404,
        // The fast path's assumption: Fastify keeps the route's context under this symbol (a Fastify upgrade
        // that drops it falls back to the getter, and this says so).
        symbol: Object.getOwnPropertySymbols(request).some((s) => s.description === 'fastify.context'),
      });
    app.addHook('onRequest', (request, _reply, done) => {
      look(request);
      done();
    });
    app.get('/things/:id', { config: { need: { group: 'things', access: 'read' } } }, async () => ({ ok: true }));
    expect((await app.inject({ method: 'GET', url: '/things/1' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/nowhere' })).statusCode).toBe(404);
    await app.close();

    const [route, missing] = seen;
    expect(route.symbol).toBe(true);
    expect(route.fast).toBe(route.getter);
    expect(route.fast).toMatchObject({ url: '/things/:id', method: 'GET', need: { group: 'things', access: 'read' } });
    expect(missing.is404).toBe(true);
    expect(missing.fast).toBeUndefined();
  });
});
