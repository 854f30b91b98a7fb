import type * as Tokenizer from 'gpt-tokenizer';
import { lazy } from '../store/lazy.js';
import type { ChatMessage, ChatTool } from './types.js';

/**
 * Token counting with the o200k tokenizer (gpt-tokenizer's default), used for usage when a provider
 * reports none, for truncation and for the token limits of runs. Message framing follows the
 * Chat Completions accounting: a few tokens per message plus the reply primer.
 */
const tokenizer = lazy<typeof Tokenizer>('gpt-tokenizer');
const encode = (text: string) => tokenizer().encode(text);
const decode = (tokens: number[]) => tokenizer().decode(tokens);

/** Loads the tokenizer's tables (about 0.2 s of CPU) ahead of the first run, off the start path. */
export const warmTokenizer = () => void tokenizer();

const PER_MESSAGE = 3;
const REPLY_PRIMER = 3;

/** Tokens of a plain text. */
export function countTokens(text: string): number {
  return text ? encode(text).length : 0;
}

/** The first `max` tokens of `text`, and whether it was cut. */
export function truncateToTokens(text: string, max: number): { text: string; cut: boolean } {
  const tokens = encode(text);
  if (tokens.length <= max) return { text, cut: false };
  return { text: decode(tokens.slice(0, Math.max(0, max))), cut: true };
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
