import { randomBytes } from 'node:crypto';

/** Every event type of the platform spec (section B, Events). */
export const EVENT_TYPES = [
  'response.completed',
  'response.cancelled',
  'response.failed',
  'response.incomplete',
  'batch.completed',
  'batch.cancelled',
  'batch.expired',
  'batch.failed',
  'fine_tuning.job.succeeded',
  'fine_tuning.job.failed',
  'fine_tuning.job.cancelled',
  'eval.run.succeeded',
  'eval.run.failed',
  'eval.run.canceled',
  'realtime.call.incoming',
  'live.transport.incoming',
  'live.call.incoming',
  'safety.warning_issued',
  'safety.deactivation_issued',
  'safety.alert.created',
  'safety.org_alert.created',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Deprecated: kept by endpoints that already subscribe to it, refused for new subscriptions. */
export const DEPRECATED_EVENT_TYPE = 'live.call.incoming';

export const isEventType = (t: string): t is EventType => (EVENT_TYPES as readonly string[]).includes(t);

export interface SipHeader {
  name: string;
  value: string;
}

/** SIP headers that carry credentials; never forwarded in an event. */
const SIP_AUTH_HEADERS = new Set(['authorization', 'proxy-authorization']);

/** Drops SIP authorization headers; keeps names, values, repeated entries and order as they came. */
export function sanitizeSipHeaders(headers: SipHeader[]): SipHeader[] {
  return headers.filter((h) => !SIP_AUTH_HEADERS.has(h.name.trim().toLowerCase())).map((h) => ({ name: h.name, value: h.value }));
}

/** `rtp` or `srtp`; anything else is unknown and the member is omitted. */
export function mediaSecurity(value: unknown): 'rtp' | 'srtp' | undefined {
  return value === 'rtp' || value === 'srtp' ? value : undefined;
}

const hex = (n: number) => randomBytes(n).toString('hex');

/** A realistic SIP INVITE header list (with an Authorization header, which the event must not carry). */
export function sampleSipInvite(callId = `${hex(8)}@198.51.100.7`): SipHeader[] {
  const branch = `z9hG4bK${hex(6)}`;
  return [
    { name: 'Via', value: `SIP/2.0/TLS 198.51.100.7:5061;branch=${branch}` },
    { name: 'Via', value: `SIP/2.0/TLS 203.0.113.20:5061;branch=z9hG4bK${hex(6)};received=203.0.113.20` },
    { name: 'Max-Forwards', value: '68' },
    { name: 'From', value: `"Jordan Example" <sip:+14155550123@pstn.example.net>;tag=${hex(4)}` },
    { name: 'To', value: '<sip:proj_standin@sip.example.com;transport=tls>' },
    { name: 'Call-ID', value: callId },
    { name: 'CSeq', value: '851287 INVITE' },
    { name: 'Contact', value: '<sip:+14155550123@198.51.100.7:5061;transport=tls>' },
    { name: 'Authorization', value: `Digest username="trunk", realm="sip.example.com", nonce="${hex(8)}", response="${hex(16)}"` },
    { name: 'Allow', value: 'INVITE, ACK, CANCEL, BYE, OPTIONS' },
    { name: 'X-Customer-Tier', value: 'gold' },
    { name: 'X-Customer-Tier', value: 'priority' },
    { name: 'User-Agent', value: 'ExampleSBC/4.2' },
    { name: 'Content-Type', value: 'application/sdp' },
    { name: 'Content-Length', value: '312' },
  ];
}

/** Ids in the forms the platform uses for each object. */
export const sampleIds = {
  batch: () => `batch_${hex(12)}`,
  fineTuningJob: () => `ftjob-${randomBytes(18).toString('base64url').slice(0, 24)}`,
  evalRun: () => `evalrun_${hex(12)}`,
  realtimeCall: () => `rtc_${hex(16)}`,
  liveSession: () => `live_${hex(16)}`,
};
