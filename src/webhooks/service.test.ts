import { describe, expect, it } from 'vitest';
import { createOutbound } from '../core/outbound.js';
import { mediaSecurity, sampleSipInvite, sanitizeSipHeaders } from './catalog.js';
import { checkEventTypes, checkUrl } from './service.js';

describe('endpoint rules', () => {
  const guard = createOutbound({ allowLoopback: false });
  it('accepts public http(s) URLs and refuses others naming the field', () => {
    expect(checkUrl('https://hooks.example.com/x?y=1', guard)).toBe('https://hooks.example.com/x?y=1');
    for (const bad of [
      'ftp://example.com/',
      'not a url',
      'https://u:p@example.com/',
      'https://example.com/#frag',
      'http://10.0.0.7/',
      'http://[::ffff:169.254.169.254]/',
      'http://127.0.0.1:4000/',
    ]) {
      expect(() => checkUrl(bad, guard), bad).toThrow(expect.objectContaining({ param: 'url', status: 400 }));
    }
    expect(checkUrl('http://127.0.0.1:4000/', createOutbound({ allowLoopback: true }))).toBe('http://127.0.0.1:4000/');
  });

  it('checks event types; live.call.incoming only for existing subscriptions', () => {
    expect(checkEventTypes(['batch.completed', 'batch.completed', 'safety.alert.created'])).toEqual([
      'batch.completed',
      'safety.alert.created',
    ]);
    expect(() => checkEventTypes([])).toThrow(expect.objectContaining({ param: 'event_types' }));
    expect(() => checkEventTypes(['batch.completed', 'response.done'])).toThrow(expect.objectContaining({ param: 'event_types[1]' }));
    expect(() => checkEventTypes(['live.call.incoming'])).toThrow(expect.objectContaining({ code: 'deprecated_event_type' }));
    expect(checkEventTypes(['live.call.incoming'], ['live.call.incoming'])).toEqual(['live.call.incoming']);
    expect(checkEventTypes(['live.call.incoming'], [], true)).toEqual(['live.call.incoming']);
  });
});

describe('SIP payload rules', () => {
  it('drops authorization headers only, keeping order and repeats', () => {
    const invite = sampleSipInvite();
    const kept = sanitizeSipHeaders(invite);
    expect(kept.some((h) => /authorization/i.test(h.name))).toBe(false);
    expect(kept).toEqual(invite.filter((h) => h.name !== 'Authorization'));
    expect(kept.filter((h) => h.name === 'X-Customer-Tier').map((h) => h.value)).toEqual(['gold', 'priority']);
    expect(
      sanitizeSipHeaders([
        { name: ' PROXY-Authorization ', value: 'x' },
        { name: 'Via', value: 'v' },
      ]),
    ).toEqual([{ name: 'Via', value: 'v' }]);
  });

  it('keeps rtp and srtp, treats anything else as unknown', () => {
    expect(mediaSecurity('rtp')).toBe('rtp');
    expect(mediaSecurity('srtp')).toBe('srtp');
    expect(mediaSecurity('SRTP')).toBeUndefined();
    expect(mediaSecurity('zrtp')).toBeUndefined();
    expect(mediaSecurity(undefined)).toBeUndefined();
  });
});
