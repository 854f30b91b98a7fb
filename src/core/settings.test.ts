import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { optionsHelp, readSettings } from './settings.js';

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
  it('reads secrets from files: STANDIN_<NAME>_FILE and --<name>-file, the final line break dropped', () => {
    const dir = mkdtempSync(join(tmpdir(), 'standin-settings-'));
    const file = (name: string, text: string) => (writeFileSync(join(dir, name), text), join(dir, name));
    const key = file('admin-key', 'sk-admin-from-a-file-000000000000\n');
    const url = file('database-url', 'postgres://standin:pw@db/standin\r\n');
    expect(readSettings([], { STANDIN_ADMIN_KEY_FILE: key, STANDIN_DATABASE_URL_FILE: url }).settings).toMatchObject({
      adminKey: 'sk-admin-from-a-file-000000000000',
      databaseUrl: 'postgres://standin:pw@db/standin',
    });
    expect(readSettings(['--admin-key-file', key], {}).settings.adminKey).toBe('sk-admin-from-a-file-000000000000');
    expect(readSettings([`--redis-url-file=${url}`], {}).settings.redisUrl).toBe('postgres://standin:pw@db/standin');
    // A flag wins over the environment's file, as over any variable.
    expect(readSettings(['--admin-key', 'sk-admin-flag-0000000000000000'], { STANDIN_ADMIN_KEY_FILE: key }).settings.adminKey).toBe(
      'sk-admin-flag-0000000000000000',
    );
    expect(optionsHelp()).toContain('STANDIN_ADMIN_KEY_FILE');
  });
  it('refuses a secret given twice, a file it cannot read, an empty file, and _FILE for what is not a secret', () => {
    const dir = mkdtempSync(join(tmpdir(), 'standin-settings-'));
    const key = join(dir, 'key');
    writeFileSync(key, 'sk-admin-from-a-file-000000000000');
    writeFileSync(join(dir, 'empty'), '\n');
    expect(() => readSettings([], { STANDIN_ADMIN_KEY: 'x', STANDIN_ADMIN_KEY_FILE: key })).toThrow(
      'set STANDIN_ADMIN_KEY or STANDIN_ADMIN_KEY_FILE, not both',
    );
    expect(() => readSettings(['--admin-key', 'x', '--admin-key-file', key], {})).toThrow('not both');
    expect(() => readSettings(['--admin-key-file', key, '--admin-key', 'x'], {})).toThrow('not both');
    expect(() => readSettings([], { STANDIN_ADMIN_KEY_FILE: join(dir, 'missing') })).toThrow(
      `STANDIN_ADMIN_KEY_FILE: cannot read ${join(dir, 'missing')}: ENOENT`,
    );
    expect(() => readSettings(['--admin-key-file', join(dir, 'empty')], {})).toThrow('is empty');
    expect(() => readSettings(['--admin-key-file'], {})).toThrow('--admin-key-file needs a value');
    // Not a secret: no _FILE form (the variable is ignored, the flag is not an option).
    expect(readSettings([], { STANDIN_VENDOR_FILE: key }).settings.vendor).toBe('vendor');
    expect(readSettings(['--vendor-file', key], {}).rest).toEqual(['--vendor-file', key]);
  });
});
