import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileModelsConfig } from './config.js';
import { createModelRegistry, DEFAULT_CATALOG } from './providers.js';

describe('models config', () => {
  it('routes exact names before patterns, patterns in file order, everything else to the builtin', () => {
    const reg = createModelRegistry({
      'gpt-*': { provider: 'upstream', base_url: 'http://127.0.0.1:1/v1' },
      '/^llama-\\d+$/': { provider: 'upstream', base_url: 'http://127.0.0.1:2/v1', context_window: 8192, list: ['llama-3'] },
      'gpt-4o': { provider: 'builtin' },
    });
    expect(reg.route('gpt-4o')?.provider).toBe('builtin');
    expect(reg.route('gpt-5')?.provider).toBe('upstream');
    expect(reg.route('llama-3')).toEqual({ provider: 'upstream', contextWindow: 8192, ownedBy: 'upstream' });
    expect(reg.route('mistral')?.provider).toBe('builtin');
    expect(reg.has('anything')).toBe(true);
    expect(reg.has('')).toBe(false);
    const ids = reg.list().map((m) => m.id);
    expect(ids).toContain('gpt-4o');
    expect(ids).toContain('llama-3');
  });

  it('lists the default catalog while the rest goes to a builtin, not once an upstream catch-all takes over', () => {
    expect(
      createModelRegistry()
        .list()
        .map((m) => m.id),
    ).toEqual(DEFAULT_CATALOG);
    expect(
      createModelRegistry({ '*': { provider: 'builtin', list: ['mine'] } })
        .list()
        .map((m) => m.id),
    ).toEqual(['mine', ...DEFAULT_CATALOG]);
    expect(
      createModelRegistry({ '*': { provider: 'upstream', base_url: 'http://127.0.0.1:1/v1', list: ['only'] } })
        .list()
        .map((m) => m.id),
    ).toEqual(['only']);
  });

  it('refuses inconsistent entries with the path in the message', () => {
    expect(() => compileModelsConfig({ x: { provider: 'upstream' } })).toThrow("models.x: an upstream needs 'base_url'");
    expect(() => compileModelsConfig({ x: { provider: 'upstream', base_url: 'ftp://a' } })).toThrow('models.x.base_url');
    expect(() => compileModelsConfig({ x: { provider: 'builtin', base_url: 'http://a' } })).toThrow(
      'models.x.base_url: only for the upstream provider',
    );
    expect(() => compileModelsConfig({ x: { provider: 'builtin', rules: [{ reply: 'r' }] } })).toThrow(
      "models.x.rules[0]: a rule needs 'match' or 'regex'",
    );
    expect(() => compileModelsConfig({ x: { provider: 'builtin', rules: [{ regex: '(', reply: 'r' }] } })).toThrow(
      'models.x.rules[0].regex',
    );
    expect(() => compileModelsConfig({ x: { provider: 'builtin', delay: 'soon' } })).toThrow('models.x.delay');
    expect(() =>
      compileModelsConfig({ x: { provider: 'upstream', base_url: 'http://a', api_key_env: 'STANDIN_UPSTREAM_UNSET' } }, { env: {} }),
    ).toThrow('models.x.api_key_env: environment variable STANDIN_UPSTREAM_UNSET is not set');
    expect(
      compileModelsConfig(
        { x: { provider: 'upstream', base_url: 'http://a/v1/', api_key_env: 'STANDIN_UPSTREAM_K' } },
        {
          env: { STANDIN_UPSTREAM_K: 'sk' },
        },
      )[0].upstream,
    ).toMatchObject({ baseUrl: 'http://a/v1', apiKey: 'sk' });
  });

  it('record needs fixtures and an upstream; replay needs fixtures and takes no upstream or builtin fields', () => {
    expect(() => compileModelsConfig({ x: { provider: 'record', base_url: 'http://a/v1' } })).toThrow(
      "models.x: provider record needs 'fixtures' (a folder)",
    );
    expect(() => compileModelsConfig({ x: { provider: 'record', fixtures: 'fx' } })).toThrow(
      "models.x: a record provider needs 'base_url'",
    );
    expect(() => compileModelsConfig({ x: { provider: 'replay' } })).toThrow("models.x: provider replay needs 'fixtures'");
    expect(() => compileModelsConfig({ x: { provider: 'replay', fixtures: 'fx', base_url: 'http://a' } })).toThrow(
      'models.x.base_url: a replay calls no upstream',
    );
    expect(() => compileModelsConfig({ x: { provider: 'replay', fixtures: 'fx', rules: [] } })).toThrow(
      'models.x.rules: only for the builtin provider',
    );
    expect(() => compileModelsConfig({ x: { provider: 'upstream', base_url: 'http://a', fixtures: 'fx' } })).toThrow(
      'models.x.fixtures: only for the record and replay providers',
    );
    const [record] = compileModelsConfig({ x: { provider: 'record', base_url: 'http://a/v1', fixtures: 'fx' } });
    expect(record).toMatchObject({
      provider: 'record',
      fixtures: { dir: resolve('fx'), root: resolve('.') },
      ownedBy: 'upstream',
      upstream: { baseUrl: 'http://a/v1' },
    });
    expect(createModelRegistry({ '*': { provider: 'replay', fixtures: '/tmp/fx' } }, { fixturesRoot: '/tmp' }).route('any')?.provider).toBe(
      'replay',
    );
  });
});
