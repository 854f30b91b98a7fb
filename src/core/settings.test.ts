import { describe, expect, it } from 'vitest';
import { readSettings } from './settings.js';

describe('settings', () => {
  it('has safe defaults', () => {
    const { settings } = readSettings([], {});
    expect(settings).toMatchObject({ host: '127.0.0.1', port: 8080, data: './.standin', seed: true, vendor: 'vendor' });
    expect(settings.databaseUrl).toBeUndefined();
  });
  it('reads STANDIN_* variables, and flags win', () => {
    const { settings, rest } = readSettings(['serve', '--port', '9000', '--no-seed', '--vendor=openai'], {
      STANDIN_PORT: '7000',
      STANDIN_DATABASE_URL: 'postgres://x/y',
      STANDIN_SEED: 'true',
    });
    expect(settings.port).toBe(9000);
    expect(settings.seed).toBe(false);
    expect(settings.vendor).toBe('openai');
    expect(settings.databaseUrl).toBe('postgres://x/y');
    expect(rest).toEqual(['serve']);
  });
  it('refuses bad values', () => {
    expect(() => readSettings(['--port', 'eighty'], {})).toThrow(/--port must be a whole number/);
    expect(() => readSettings([], { STANDIN_SEED: 'maybe' })).toThrow(/--seed must be true or false/);
  });
});
