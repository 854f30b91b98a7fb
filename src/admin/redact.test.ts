import { describe, expect, it } from 'vitest';
import { redactBody, redactHeaders, redactJson, redactText } from './redact.js';
import { redactUrl } from './request-log.js';

const SECRETS = {
  project: 'sk-proj-Abc123def456ghi789jkl012mno345pqr',
  service: 'sk-svcacct-Abc123def456ghi789jkl012mno',
  ads: 'sk-ads-Abc123def456ghi789jkl012mno345',
  admin: 'sk-admin-Abc123def456ghi789jkl012mno',
  webhook: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  workload: 'wit_Abc123def456ghi789jkl012mno345pqr678',
  jwt: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzcGlmZmU6Ly94In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ',
  session: 'session.1790000000000.AbCdEfGhIjKlMnOpQrStUvWx.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg',
  link: 'link.1790000000000.AbCdEfGhIjKlMnOpQrStUvWx.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg',
};

describe('redaction by shape', () => {
  it('masks every kind of secret inside longer text, keeping the text around it', () => {
    for (const [kind, secret] of Object.entries(SECRETS)) {
      const out = redactText(`before ${secret} after, and "${secret}", (${secret})`);
      expect(out, kind).not.toContain(secret);
      expect(out, kind).toBe('before [redacted] after, and "[redacted]", ([redacted])');
    }
    expect(redactText('Authorization: Bearer opaque-token-of-some-idp')).toBe('Authorization: Bearer [redacted]');
  });

  it('masks secrets in URLs, in non-JSON bodies, in every header and in JSON keys and values', () => {
    expect(redactUrl(`/v1/x/${SECRETS.project}?q=${SECRETS.webhook}&key=hunter2`)).toBe('/v1/x/[redacted]?q=[redacted]&key=[redacted]');
    expect(redactBody(`grant_type=x&subject_token=${SECRETS.jwt}`)).toBe('grant_type=x&subject_token=[redacted]');
    expect(redactHeaders({ 'X-Forwarded-Key': SECRETS.ads, 'user-agent': 'curl/8' })).toEqual({
      'x-forwarded-key': '[redacted]',
      'user-agent': 'curl/8',
    });
    // The dashboard session's binding: half of what signs a browser in.
    expect(redactHeaders({ 'x-standin-dashboard': 'Zm9vYmFyYmF6cXV4cXV1eHF1dXhxdXV4cXV1eHF1dXg' })).toEqual({
      'x-standin-dashboard': '[redacted]',
    });
    const json = redactJson({ messages: [{ role: 'user', content: `my key: ${SECRETS.project}` }], [SECRETS.admin]: 1 });
    expect(JSON.stringify(json)).not.toMatch(/sk-/);
    expect(json).toEqual({ messages: [{ role: 'user', content: 'my key: [redacted]' }], '[redacted]': 1 });
    // An MCP tool's credentials: its `authorization` and an Authorization header.
    expect(redactJson({ tools: [{ type: 'mcp', authorization: 'opaque-token', headers: { Authorization: 'Bearer opaque' } }] })).toEqual({
      tools: [{ type: 'mcp', authorization: '[redacted]', headers: { Authorization: '[redacted]' } }],
    });
  });

  it('masks known secrets of any form verbatim, and leaves ordinary text alone', () => {
    expect(redactText('the admin key is correct-horse-battery', ['correct-horse-battery'])).toBe('the admin key is [redacted]');
    expect(redactText('ask-me sk- task-12 whsec_ eyJ a.b.c session.1.2.3 file-abc123', [''])).toBe(
      'ask-me sk- task-12 whsec_ eyJ a.b.c session.1.2.3 file-abc123',
    );
  });

  it('stays linear on hostile input (runs that almost match)', () => {
    const started = performance.now();
    for (const s of ['eyJ'.repeat(300_000), 'sk-'.repeat(300_000) + '!', ' '.repeat(1_000_000), 'Bearer '.repeat(150_000)]) redactText(s);
    // A generous "did not freeze" bound: a backtracking pattern takes minutes here.
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
