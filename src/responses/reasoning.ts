import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { invalid } from '../core/errors.js';
import type { Ctx } from '../core/module.js';
import { countTokens } from '../models/service.js';
import type { ChatMessage } from '../models/types.js';
import type { Reasoning } from './events.js';
import type { CreateResponseRequest, ReasoningOutput } from './schemas.js';
import { instanceKey } from './stream-store.js';

/**
 * Reasoning models (docs/models.md): the o-series and the gpt-5 family (not their `-chat` variants), as
 * on the platform. On the built-in model they reason deterministically: a reasoning item before the
 * answer, whose summary restates the request, and `reasoning_tokens` counted from it.
 */
export function isReasoningModel(model: string): boolean {
  return /^(o1|o3|o4-mini)(-|$)|^gpt-5/.test(model) && !/-chat/.test(model);
}

/** How many times the summary's tokens a turn reasons, by effort (`none`: no reasoning at all). */
const EFFORT_FACTOR: Record<string, number> = { none: 0, minimal: 1, low: 1, medium: 2, high: 4, xhigh: 8, max: 8 };

/** The effort a reasoning model uses when the request names none (the platform's default). */
export const DEFAULT_EFFORT = 'medium';

const snippet = (text: string, max = 120) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** The built-in model's reasoning for a turn, or undefined when it does not reason (effort `none`). */
export function builtinReasoning(body: Pick<CreateResponseRequest, 'reasoning' | 'tools'>, messages: ChatMessage[]): Reasoning | undefined {
  const factor = EFFORT_FACTOR[body.reasoning?.effort ?? DEFAULT_EFFORT];
  if (!factor) return undefined;
  const last = [...messages].reverse().find((m) => m.role === 'user' || m.role === 'tool');
  const asked =
    last?.role === 'tool'
      ? `The tool returned: "${snippet(last.content ?? '')}". I answer from it.`
      : `The user asks: "${snippet(last?.content ?? '')}".`;
  const tools = (body.tools ?? []).map((t) => t.name);
  const plan = last?.role === 'tool' ? '' : tools.length ? ` Tools on offer: ${tools.join(', ')}.` : ' I answer directly.';
  const summary = [`**Reading the request**\n\n${asked}${plan}`];
  return { summary, tokens: countTokens(summary.join('\n')) * factor };
}

/**
 * `encrypted_content` of a reasoning item (include `reasoning.encrypted_content`): `stenc1.` + base64url of
 * a 12-byte IV, the AES-256-GCM ciphertext of `{"v":1,"id","model","summary":[…],"tokens"}` and the
 * 16-byte tag; the project id is the additional data, so a token is opaque, authenticated, and good only in
 * the project that got it. The key is the instance's (stored once, shared by every Standin on the store).
 */
export interface SealedReasoning {
  v: 1;
  id: string;
  model: string;
  summary: string[];
  tokens: number;
}
const PREFIX = 'stenc1.';

/** Seals a reasoning item for `encrypted_content`. */
export function sealReasoning(key: Buffer, projectId: string, model: string, item: ReasoningOutput, summary: string[], tokens: number) {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(projectId));
  const plain: SealedReasoning = { v: 1, id: item.id, model, summary, tokens };
  const body = Buffer.concat([cipher.update(JSON.stringify(plain), 'utf8'), cipher.final()]);
  return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** At most this long: a reasoning item's sealed summary is a few hundred bytes. */
const MAX_SEALED = 64 * 1024;

/**
 * Opens an `encrypted_content` passed back in an input (the next turn of a stateless client). A token not
 * sealed by this Standin for this project, altered, or malformed is a 400 naming `param`.
 */
export async function openReasoning(ctx: Ctx, projectId: string, token: string, param: string): Promise<SealedReasoning> {
  const bad = () =>
    invalid(`'${param}' is not an encrypted_content this Standin issued to this project.`, param, 'invalid_encrypted_content');
  if (typeof token !== 'string' || !token.startsWith(PREFIX) || token.length > MAX_SEALED) throw bad();
  const raw = Buffer.from(token.slice(PREFIX.length), 'base64url');
  if (raw.length < 12 + 16 + 2) throw bad();
  try {
    const decipher = createDecipheriv('aes-256-gcm', await instanceKey(ctx), raw.subarray(0, 12)).setAAD(Buffer.from(projectId));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    const plain = Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString('utf8');
    const sealed = JSON.parse(plain) as SealedReasoning;
    if (sealed.v !== 1 || !Array.isArray(sealed.summary)) throw new Error('unknown version');
    return sealed;
  } catch {
    throw bad();
  }
}
