import type { Environment } from '@marcbachmann/cel-js';
import { AttributeConditionFailed, MappingResolutionFailed } from './errors.js';

/**
 * Attribute conditions and derived attributes in CEL, the language trusted federation systems use.
 * A provider maps `<vendor>.subject` (exactly one non-empty value) and optional `attribute.<name>` keys to
 * expressions over `assertion` (the JWT's claims, or the certificate's fields); its condition may also read
 * the derived `<vendor>` and `attribute` maps.
 *
 * Limits keep evaluation cheap and bounded: expressions are short, their AST small and shallow, literals
 * small; the inputs are bounded by the subject token size and the chain size checked before evaluation.
 */
export const CEL_LIMITS = {
  maxExpressionLength: 2048,
  maxAttributes: 50,
  maxAttributeValueLength: 2048,
  maxListValues: 100,
  env: { maxAstNodes: 512, maxDepth: 32, maxListElements: 64, maxMapEntries: 64, maxCallArguments: 8 },
} as const;

const ATTRIBUTE_KEY = /^attribute\.[a-z_][a-z0-9_]{0,63}$/;

export type AttributeValue = string | boolean | number | string[];

export interface ProviderExpressions {
  /** CEL boolean over `assertion`, `attribute`, `<vendor>`; absent means every verified credential passes. */
  attribute_condition?: string | null;
  /** `<vendor>.subject` and `attribute.<name>` → CEL over `assertion`. */
  attribute_mapping: Record<string, string>;
}

/** A problem in the configuration, naming the field (`param`) and the rule. */
export class ExpressionConfigError extends Error {
  constructor(
    message: string,
    readonly param: string,
  ) {
    super(message);
    this.name = 'ExpressionConfigError';
  }
}

type Program = (context: Record<string, unknown>) => unknown;

export interface CompiledExpressions {
  condition: Program | null;
  mapping: Array<{ key: string; program: Program }>;
  subjectKey: string;
}

/**
 * The CEL environments of each vendor name. Module-level on purpose: a pure cache — an environment is a
 * function of the vendor name alone, is never changed once built, and holds no request or instance data,
 * so instances (and tests) may share it; its keys are the few vendor names a process is configured with.
 */
const envs = new Map<string, { mapping: Environment; condition: Environment }>();

/** The CEL library, loaded by loadCel() (a module-level cache as `envs` is: the same code for every instance). */
let cel: typeof import('@marcbachmann/cel-js') | undefined;

/**
 * Loads the CEL library, which compileExpressions needs: it is loaded when an area first uses it (a provider
 * saved, a token exchanged), not at every start, where its code was a twentieth of what a start loads.
 */
export async function loadCel(): Promise<void> {
  cel ??= await import('@marcbachmann/cel-js');
}

function environments(vendor: string) {
  let e = envs.get(vendor);
  if (!e) {
    if (!cel) throw new Error('the CEL library is not loaded: await loadCel() before compileExpressions()');
    const { Environment } = cel;
    const base = { unlistedVariablesAreDyn: false, limits: CEL_LIMITS.env };
    e = {
      mapping: new Environment(base).registerVariable('assertion', 'map'),
      condition: new Environment(base)
        .registerVariable('assertion', 'map')
        .registerVariable('attribute', 'map')
        .registerVariable(vendor, 'map'),
    };
    envs.set(vendor, e);
  }
  return e;
}

function compileOne(env: Environment, source: unknown, param: string): Program {
  if (typeof source !== 'string' || source.trim() === '')
    throw new ExpressionConfigError(`'${param}' must be a non-empty CEL expression.`, param);
  if (source.length > CEL_LIMITS.maxExpressionLength) {
    throw new ExpressionConfigError(`'${param}' must be at most ${CEL_LIMITS.maxExpressionLength} characters.`, param);
  }
  let program: Program & { check(): { valid: boolean; error?: Error } };
  try {
    program = env.parse(source) as unknown as typeof program;
  } catch (err) {
    throw new ExpressionConfigError(`'${param}' is not valid CEL: ${firstLine(err)}`, param);
  }
  const checked = program.check();
  if (!checked.valid) throw new ExpressionConfigError(`'${param}' is not valid CEL: ${firstLine(checked.error)}`, param);
  return program;
}

const firstLine = (err: unknown) => String((err as Error)?.message ?? err).split('\n')[0];

/** Parses and type-checks a provider's expressions (after loadCel()); throws ExpressionConfigError naming the field. */
export function compileExpressions(cfg: ProviderExpressions, vendor: string, paramPrefix = ''): CompiledExpressions {
  const { mapping: mapEnv, condition: condEnv } = environments(vendor);
  const subjectKey = `${vendor}.subject`;
  const entries = Object.entries(cfg.attribute_mapping ?? {});
  if (!entries.some(([k]) => k === subjectKey)) {
    throw new ExpressionConfigError(
      `'attribute_mapping' must map '${subjectKey}' (exactly one non-empty subject).`,
      `${paramPrefix}attribute_mapping`,
    );
  }
  if (entries.length > CEL_LIMITS.maxAttributes) {
    throw new ExpressionConfigError(
      `'attribute_mapping' may have at most ${CEL_LIMITS.maxAttributes} keys.`,
      `${paramPrefix}attribute_mapping`,
    );
  }
  const mapping = entries.map(([key, source]) => {
    const param = `${paramPrefix}attribute_mapping.${key}`;
    if (key !== subjectKey && !ATTRIBUTE_KEY.test(key)) {
      throw new ExpressionConfigError(`'${param}': keys are '${subjectKey}' or 'attribute.<name>' (lowercase letters, digits, _).`, param);
    }
    return { key, program: compileOne(mapEnv, source, param) };
  });
  const condition =
    cfg.attribute_condition == null ? null : compileOne(condEnv, cfg.attribute_condition, `${paramPrefix}attribute_condition`);
  return { condition, mapping, subjectKey };
}

/** JSON numbers that are whole become CEL ints (BigInt), so `assertion.exp > 0` type-checks as in other CEL hosts. */
export function toCel(value: unknown, depth = 0): unknown {
  if (depth > 32) return null;
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map((v) => toCel(v, depth + 1));
  if (value && typeof value === 'object') {
    // Null-prototype maps: a claim named `__proto__` stays an ordinary key.
    const out: Record<string, unknown> = Object.create(null);
    for (const [k, v] of Object.entries(value)) out[k] = toCel(v, depth + 1);
    return out;
  }
  return value;
}

function fromCel(value: unknown, key: string): AttributeValue {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'bigint') return Number(value);
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (Array.isArray(value) && value.length <= CEL_LIMITS.maxListValues && value.every((v) => typeof v === 'string'))
    return value as string[];
  throw new MappingResolutionFailed(
    'transformation_failed',
    `Attribute '${key}' must evaluate to a string, bool, number or list of strings.`,
  );
}

export interface DerivedAttributes {
  subject: string;
  /** `attribute.<name>` → value, keyed by the full name. */
  attributes: Record<string, AttributeValue>;
}

/**
 * Computes the derived attributes and evaluates the condition over them. Throws
 * MappingResolutionFailed('transformation_failed' | 'subject_invalid') or AttributeConditionFailed.
 */
export function evaluateExpressions(compiled: CompiledExpressions, assertion: Record<string, unknown>, vendor: string): DerivedAttributes {
  const input = toCel(assertion) as Record<string, unknown>;
  const attributes: Record<string, AttributeValue> = Object.create(null);
  let subject: string | null = null;
  for (const { key, program } of compiled.mapping) {
    let raw: unknown;
    try {
      raw = program({ assertion: input });
    } catch (err) {
      throw new MappingResolutionFailed('transformation_failed', `Attribute '${key}' could not be computed: ${celReason(err)}`);
    }
    const value = fromCel(raw, key);
    if (key === compiled.subjectKey) {
      const one = Array.isArray(value) ? (value.length === 1 ? value[0] : null) : typeof value === 'string' ? value : null;
      if (one === null || one === '' || one.length > CEL_LIMITS.maxAttributeValueLength) {
        throw new MappingResolutionFailed(
          'subject_invalid',
          `'${key}' must derive exactly one non-empty string of at most ${CEL_LIMITS.maxAttributeValueLength} characters.`,
        );
      }
      subject = one;
    } else {
      if (typeof value === 'string' && value.length > CEL_LIMITS.maxAttributeValueLength) {
        throw new MappingResolutionFailed(
          'transformation_failed',
          `Attribute '${key}' is longer than ${CEL_LIMITS.maxAttributeValueLength} characters.`,
        );
      }
      attributes[key] = value;
    }
  }
  if (compiled.condition) {
    const attributeMap: Record<string, unknown> = Object.create(null);
    for (const [k, v] of Object.entries(attributes)) attributeMap[k.slice('attribute.'.length)] = toCel(v);
    let ok: unknown;
    try {
      ok = compiled.condition({ assertion: input, attribute: attributeMap, [vendor]: { subject } });
    } catch (err) {
      // An expression that cannot be evaluated on this credential (a missing claim, a type mismatch) rejects it.
      void err;
      throw new AttributeConditionFailed();
    }
    if (ok !== true) throw new AttributeConditionFailed();
  }
  return { subject: subject!, attributes };
}

/** The evaluator's message without the source excerpt and caret lines (which only repeat the configured expression). */
function celReason(err: unknown): string {
  return firstLine(err).slice(0, 200);
}

/**
 * Whether a mapping's `attribute_match` holds: every key names a derived attribute (`<vendor>.subject`,
 * `attribute.<name>`) or a raw claim (`assertion.<path>`), and its value equals the expected string (a list
 * value matches when it contains it).
 */
export function matchesAttributes(
  match: Record<string, string> | null | undefined,
  derived: DerivedAttributes,
  assertion: Record<string, unknown>,
  vendor: string,
): boolean {
  for (const [key, expected] of Object.entries(match ?? {})) {
    let actual: unknown;
    if (key === `${vendor}.subject`) actual = derived.subject;
    else if (key.startsWith('attribute.')) actual = derived.attributes[key];
    else if (key.startsWith('assertion.')) actual = pathOf(assertion, key.slice('assertion.'.length).split('.'));
    else return false;
    if (!sameValue(actual, expected)) return false;
  }
  return true;
}

function pathOf(obj: unknown, path: string[]): unknown {
  let cur = obj;
  for (const part of path) {
    if (!cur || typeof cur !== 'object' || Array.isArray(cur) || !Object.prototype.hasOwnProperty.call(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function sameValue(actual: unknown, expected: string): boolean {
  if (Array.isArray(actual)) return actual.some((v) => sameValue(v, expected));
  if (typeof actual === 'string') return actual === expected;
  if (typeof actual === 'number' || typeof actual === 'boolean') return String(actual) === expected;
  return false;
}

/** Validates an `attribute_match` object's keys; throws ExpressionConfigError naming the field. */
export function checkAttributeMatch(match: Record<string, unknown>, vendor: string, param: string): void {
  const keys = Object.keys(match);
  if (keys.length > CEL_LIMITS.maxAttributes)
    throw new ExpressionConfigError(`'${param}' may have at most ${CEL_LIMITS.maxAttributes} keys.`, param);
  for (const key of keys) {
    const ok = key === `${vendor}.subject` || ATTRIBUTE_KEY.test(key) || /^assertion(\.[A-Za-z0-9_:-]{1,128}){1,8}$/.test(key);
    if (!ok)
      throw new ExpressionConfigError(
        `'${param}.${key}': keys are '${vendor}.subject', 'attribute.<name>' or 'assertion.<claim path>'.`,
        `${param}.${key}`,
      );
    const v = match[key];
    if (typeof v !== 'string' || v.length === 0 || v.length > CEL_LIMITS.maxAttributeValueLength) {
      throw new ExpressionConfigError(
        `'${param}.${key}' must be a non-empty string of at most ${CEL_LIMITS.maxAttributeValueLength} characters.`,
        `${param}.${key}`,
      );
    }
  }
}
