import type { Logger } from '../core/module.js';
import { checkedProvider } from './answer.js';
import { createBuiltinProvider } from './builtin.js';
import { compileModelsConfig, DEFAULT_CONTEXT_WINDOW, type ModelsConfig, type Route } from './config.js';
import { countTokens } from './tokens.js';
import { createRecordProvider, createReplayProvider } from './recording.js';
import type { ChatProvider as Provider, ModelInfo, ModelProviders } from './types.js';
import { createUpstreamProvider } from './upstream.js';

/** Names the default configuration advertises in `GET /v1/models` (all served by the built-in provider). */
export const DEFAULT_CATALOG = ['gpt-5', 'gpt-5-mini', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4o', 'gpt-4o-mini', 'gpt-3.5-turbo'];

/** Extra, Standin-specific view of a model: where it is routed and its context window. */
export interface ModelRoute {
  provider: Route['provider'];
  contextWindow: number;
  ownedBy: string;
}

/** The published service with the config hook and routing details the runs need. */
export interface ModelRegistry extends ModelProviders {
  /** Replaces the routing table (the config file's `models` section). Throws on an invalid section. */
  configure(config: ModelsConfig | undefined): void;
  /** How a model name is served, or undefined when no provider serves it. */
  route(model: string): ModelRoute | undefined;
}

/** What the registry takes from the process (its settings and log), not from the config. */
export interface RegistryOptions {
  /** `--fixtures-root`: every `fixtures` folder must be inside it (default the working directory). */
  fixturesRoot?: string;
  /** `--fixture-max-bytes`: the largest fixture file read. */
  fixtureMaxBytes?: number;
  env?: NodeJS.ProcessEnv;
  log?: Pick<Logger, 'warn' | 'error'>;
}

const DEFAULT_FIXTURE_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The provider a compiled route names. A recording checks the upstream's answer (src/models/answer.ts)
 * before writing it, so no fixture is written that a replay would refuse.
 */
function providerOf(r: Route, opts: RegistryOptions): Provider {
  const folder = r.fixtures && { root: r.fixtures.root, maxBytes: opts.fixtureMaxBytes ?? DEFAULT_FIXTURE_MAX_BYTES, log: opts.log };
  switch (r.provider) {
    case 'upstream':
      return createUpstreamProvider(r.upstream!);
    case 'record':
      return createRecordProvider(checkedProvider(createUpstreamProvider(r.upstream!)), r.fixtures!.dir, folder!);
    case 'replay':
      return createReplayProvider(r.fixtures!.dir, folder!);
    default:
      return createBuiltinProvider(r.builtin!);
  }
}

/**
 * Routes each model name to a provider: exact config names, then config patterns in order, then — when
 * the config has no catch-all — the built-in provider with no rules, so every name works out of the box.
 * Every provider's answers are checked where they enter Standin (answer.ts).
 */
export function createModelRegistry(config?: ModelsConfig, opts: RegistryOptions = {}): ModelRegistry {
  let routes: Route[] = [];
  const providers = new Map<Route, Provider>();
  const fallback: Route = {
    key: '*',
    exact: false,
    matches: () => true,
    provider: 'builtin',
    builtin: { rules: [], chunkChars: 32, delayMs: 0 },
    contextWindow: DEFAULT_CONTEXT_WINDOW,
    ownedBy: 'standin',
    list: DEFAULT_CATALOG,
  };
  const fallbackProvider = checkedProvider(createBuiltinProvider(fallback.builtin!));

  function find(model: string): { route: Route; provider: Provider } {
    for (const r of routes) if (r.matches(model)) return { route: r, provider: providers.get(r)! };
    return { route: fallback, provider: fallbackProvider };
  }

  const registry: ModelRegistry = {
    configure(next) {
      const compiled = compileModelsConfig(next, { env: opts.env, fixturesRoot: opts.fixturesRoot });
      providers.clear();
      for (const r of compiled) providers.set(r, checkedProvider(providerOf(r, opts)));
      routes = compiled;
    },
    has: (model) => typeof model === 'string' && model.length > 0 && model.length <= 256,
    route(model) {
      if (!registry.has(model)) return undefined;
      const { route } = find(model);
      return { provider: route.provider, contextWindow: route.contextWindow, ownedBy: route.ownedBy };
    },
    list() {
      const seen = new Map<string, ModelInfo>();
      const add = (id: string) => {
        if (seen.has(id)) return;
        const { route } = find(id);
        seen.set(id, { id, provider: route.provider, owned_by: route.ownedBy });
      };
      for (const r of routes) {
        if (r.exact) add(r.key);
        r.list.forEach(add);
      }
      // The default catalog while the remaining names go to a built-in provider (not to an upstream).
      if (find('\u0000any-model').route.provider === 'builtin') fallback.list.forEach(add);
      return [...seen.values()];
    },
    async complete(request, onChunk) {
      return find(request.model).provider.complete(request, onChunk);
    },
    countTokens,
  };
  registry.configure(config);
  return registry;
}
