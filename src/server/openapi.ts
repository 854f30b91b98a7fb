import type { FastifyInstance, RouteOptions } from 'fastify';
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger';

type Hook = (...args: any[]) => unknown;

/**
 * GET /openapi.json's document, with @fastify/swagger (and the YAML library it brings, a tenth of the start
 * bundle) loaded on its first request instead of at every start. The app's routes, and the plugin contexts
 * their shared schemas live in, are noted as they are added (what the plugin's own hooks note); on the first
 * call the plugin is set up on a stand-in of the app, shown the same routes and contexts in the same order,
 * and its document function is kept. The document is the one the plugin registered at start would build.
 */
export function lazyOpenApi(app: FastifyInstance, options: FastifyDynamicSwaggerOptions): () => Promise<unknown> {
  const routes: RouteOptions[] = [];
  const contexts: FastifyInstance[] = [];
  let ready = false;
  app.addHook('onRoute', (route) => void routes.push(route as RouteOptions));
  app.addHook('onRegister', (instance) => void contexts.push(instance as FastifyInstance));
  app.addHook('onReady', (done) => {
    ready = true;
    done();
  });
  let document: Promise<() => unknown> | undefined;
  const build = async () => {
    // A CommonJS package: its exports are the module's default, in node and in the bundle's chunk alike.
    const { fastifySwagger } = (await import('@fastify/swagger')).default;
    const hooks: Record<string, Hook> = {};
    let swagger: (() => unknown) | undefined;
    const standIn = {
      addHook: (name: string, hook: Hook) => void (hooks[name] = hook),
      decorate: (_name: string, fn: () => unknown) => void (swagger = fn),
      getSchemas: () => app.getSchemas(),
    };
    await new Promise<void>((resolve, reject) =>
      fastifySwagger(standIn as unknown as FastifyInstance, { ...options }, (err?: Error) => (err ? reject(err) : resolve())),
    );
    for (const route of routes) hooks.onRoute(route);
    for (const context of contexts) await hooks.onRegister(context);
    await new Promise<void>((resolve) => hooks.onReady(resolve));
    if (!swagger) throw new Error('@fastify/swagger did not provide its document function');
    return swagger;
  };
  return async () => {
    if (!ready) throw new Error('the OpenAPI document is built once the app is ready');
    document ??= build();
    // A failed set-up is tried again on the next request rather than kept.
    const swagger = await document.catch((err: unknown) => {
      document = undefined;
      throw err;
    });
    return swagger();
  };
}
