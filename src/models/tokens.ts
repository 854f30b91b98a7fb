import { countText, decodeTokens, encodePieces } from '../core/tokenizer.js';
import type { ChatMessage, ChatTool } from './types.js';

/**
 * Token counting with the o200k tokenizer (core/tokenizer.ts: gpt-tokenizer's tokens, in linear time),
 * used for usage when a provider reports none, for truncation and for the token limits of runs. Message
 * framing follows the Chat Completions accounting: a few tokens per message plus the reply primer.
 */
export { warmTokenizer } from '../core/tokenizer.js';

const PER_MESSAGE = 3;
const REPLY_PRIMER = 3;

/**
 * Counts of longer texts seen lately, least recently used out first, at most `CACHE_CHARS` characters in
 * all: a conversation shows the model its earlier items at every turn, and counting them again made a
 * turn's cost grow with the conversation's length (bench/conversations.mjs).
 */
const counted = new Map<string, number>();
let countedChars = 0;
const CACHE_CHARS = 8 * 1024 * 1024;
/** Shorter texts are counted again: they cost about what a look-up does. */
const CACHE_FROM = 256;

/** Tokens of a plain text. */
export function countTokens(text: string): number {
  if (!text) return 0;
  if (text.length < CACHE_FROM || text.length > CACHE_CHARS / 8) return countText(text);
  const hit = counted.get(text);
  if (hit !== undefined) {
    counted.delete(text);
    counted.set(text, hit);
    return hit;
  }
  const n = countText(text);
  counted.set(text, n);
  countedChars += text.length;
  for (const old of counted.keys()) {
    if (countedChars <= CACHE_CHARS) break;
    counted.delete(old);
    countedChars -= old.length;
  }
  return n;
}

/** The first `max` tokens of `text`, and whether it was cut. */
export function truncateToTokens(text: string, max: number): { text: string; cut: boolean } {
  const tokens: number[] = [];
  for (const piece of encodePieces(text)) {
    for (const t of piece) tokens.push(t);
    if (tokens.length > max) break;
  }
  if (tokens.length <= max) return { text, cut: false };
  let kept = decodeTokens(tokens.slice(0, Math.max(0, max)));
  // A cut inside a multi-byte character leaves U+FFFD that the text did not have: drop it.
  while (kept.endsWith('\uFFFD') && !text.startsWith(kept)) kept = kept.slice(0, -1);
  return { text: kept, cut: true };
}

/** Tokens one message adds to a prompt. */
export function countMessage(m: ChatMessage): number {
  let n = PER_MESSAGE + countTokens(m.content ?? '');
  for (const call of m.tool_calls ?? []) n += countTokens(call.function.name) + countTokens(call.function.arguments);
  return n;
}

/** Tokens a prompt costs: its messages, the function definitions, the reply primer. */
export function countPrompt(messages: ChatMessage[], tools: ChatTool[] = []): number {
  let n = REPLY_PRIMER;
  for (const m of messages) n += countMessage(m);
  if (tools.length) n += countTokens(JSON.stringify(tools));
  return n;
}
