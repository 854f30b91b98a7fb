import { Type, type Static } from 'typebox';
import { partChecker } from '../core/validation.js';
import type { ChatTool } from '../models/types.js';

/**
 * Custom tools (`{type: "custom", name, description, format}`, CustomToolParam of the official document):
 * client-executed like functions, but the model's call carries free text `input` rather than JSON
 * arguments. The model (built-in or upstream) is offered each one as a function with one string
 * parameter `input`; Standin maps the call back to a `custom_tool_call` item whose `input` is that
 * parameter (docs/responses.md, "Custom tools").
 */

/** The longest grammar `definition` accepted: a grammar is data, kept and echoed, never compiled. */
export const MAX_GRAMMAR_CHARS = 65_536;

const TextFormat = Type.Object({ type: Type.Literal('text') }, { additionalProperties: false });
const GrammarFormat = Type.Object(
  {
    type: Type.Literal('grammar'),
    syntax: Type.Enum(['lark', 'regex']),
    definition: Type.String({ minLength: 1, maxLength: MAX_GRAMMAR_CHARS }),
  },
  { additionalProperties: false },
);

export const CustomToolSchema = Type.Object(
  {
    type: Type.Literal('custom'),
    name: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$' }),
    description: Type.Optional(Type.String({ maxLength: 4096 })),
    format: Type.Optional(Type.Union([TextFormat, GrammarFormat])),
  },
  { additionalProperties: false },
);
export type CustomTool = Static<typeof CustomToolSchema>;
/** Checks a `tools[i]` entry of type `custom` at a JSON pointer (`/tools/1`): a 400 naming the member. */
export const checkCustomTool = partChecker<CustomTool>(CustomToolSchema);

/** The function an upstream (or the built-in) model is offered for a custom tool: one string parameter `input`. */
export function customFunction(tool: CustomTool): ChatTool {
  const format = tool.format;
  const input =
    format?.type === 'grammar'
      ? `The tool's free-text input. It must match this ${format.syntax === 'lark' ? 'Lark grammar' : 'regular expression'}:\n${format.definition}`
      : "The tool's free-text input.";
  return {
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      parameters: {
        type: 'object',
        properties: { input: { type: 'string', description: input } },
        required: ['input'],
        additionalProperties: false,
      },
    },
  };
}

/** The arguments of the function call standing for a custom call with this `input`. */
export const argumentsOf = (input: string): string => JSON.stringify({ input });

/**
 * The `input` of a model's call of a custom tool's function: its `input` member; arguments that are not
 * such an object (a model that wrote the text itself) are the input as they are.
 */
export function inputOf(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (parsed && typeof parsed === 'object' && typeof (parsed as { input?: unknown }).input === 'string')
      return (parsed as { input: string }).input;
  } catch {
    // not JSON: the text itself
  }
  return args;
}

const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const OPENING = /^\s*\{\s*"input"\s*:\s*"/;

/**
 * Decodes a streamed custom call's arguments into its `input` as they come: each `push` gives the newly
 * decoded text (whole characters only), reading every piece once. When the arguments do not start as
 * `{"input": "` (or hold a bad escape), it gives nothing more: the input then comes whole when the call
 * is done (`inputOf`).
 */
export class InputDecoder {
  /** Arguments not decoded yet (the opening until it is whole, an escape cut between pieces). */
  private pending = '';
  private state: 'opening' | 'string' | 'done' | 'off' = 'opening';

  push(piece: string): string {
    if (this.state === 'done' || this.state === 'off') return '';
    this.pending += piece;
    if (this.state === 'opening') {
      const open = OPENING.exec(this.pending);
      if (!open) {
        // Still possibly the opening's start; longer than any opening is something else.
        if (this.pending.length > 64 || !/^\s*(\{\s*("(i(n(p(u(t("\s*(:\s*)?)?)?)?)?)?)?)?)?$/.test(this.pending)) this.state = 'off';
        return '';
      }
      this.pending = this.pending.slice(open[0].length);
      this.state = 'string';
    }
    let out = '';
    let i = 0;
    const s = this.pending;
    while (i < s.length) {
      const c = s[i];
      if (c === '"') {
        this.state = 'done';
        i = s.length;
        break;
      }
      if (c !== '\\') {
        out += c;
        i++;
        continue;
      }
      const e = s[i + 1];
      if (e === undefined) break;
      if (e === 'u') {
        const hex = s.slice(i + 2, i + 6);
        if (hex.length < 4) break;
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) return this.stop(out);
        const code = parseInt(hex, 16);
        if (code >= 0xd800 && code <= 0xdbff) {
          // A high surrogate waits for its low half, so a delta never splits a character.
          const rest = s.slice(i + 6, i + 12);
          const low = /^\\u([dD][c-fC-F][0-9a-fA-F]{2})$/.exec(rest);
          if (!low) {
            if (rest.length < 6) break;
            return this.stop(out);
          }
          out += String.fromCharCode(code, parseInt(low[1], 16));
          i += 12;
          continue;
        }
        out += String.fromCharCode(code);
        i += 6;
        continue;
      }
      const plain = ESCAPES[e];
      if (plain === undefined) return this.stop(out);
      out += plain;
      i += 2;
    }
    this.pending = s.slice(i);
    return out;
  }

  private stop(out: string): string {
    this.state = 'off';
    return out;
  }
}
