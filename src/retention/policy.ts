import { parseDuration } from '../core/clock.js';
import type { RetentionRule } from '../core/retention.js';

/** How long one record kind is kept (ms of the Standin clock; null: kept until deleted) and who said so. */
export interface Keep {
  ms: number | null;
  source: 'default' | 'setting' | 'config';
}

/** `off`, or a duration such as `30d`, `72h`, `1d12h`. */
export const KEEP_PATTERN = '^(off|([0-9]+(\\.[0-9]+)?(ms|s|m|h|d))+)$';

/** Reads one keep value (`off` or a duration) into ms, or null for `off`. */
export function parseKeep(text: string): number | null {
  if (text === 'off') return null;
  if (!new RegExp(KEEP_PATTERN).test(text)) throw new RangeError(`'${text}' is neither 'off' nor a duration such as 30d, 72h or 90m`);
  return parseDuration(text);
}

/** Reads `--retention` (`name=30d,other=off`) against the known rules; throws on an unknown name or a bad value. */
export function parseRetentionSetting(text: string | undefined, rules: readonly RetentionRule[]): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  if (!text?.trim()) return out;
  for (const part of text.split(',')) {
    const [name, value] = part.split('=').map((s) => s.trim());
    if (!name || value === undefined) throw new Error(`--retention: '${part.trim()}' is not name=duration (e.g. webhook_deliveries=7d)`);
    checkName(name, rules, '--retention');
    try {
      out[name] = parseKeep(value);
    } catch (err) {
      throw new Error(`--retention: ${name}: ${(err as Error).message}`);
    }
  }
  return out;
}

/** Throws unless `name` is a rule some module declares. */
export function checkName(name: string, rules: readonly RetentionRule[], where: string): void {
  if (!rules.some((r) => r.name === name))
    throw new Error(`${where}: unknown record kind '${name}'; known: ${rules.map((r) => r.name).join(', ')}`);
}

/** The keep time of each rule: the config file's section wins over `--retention`, which wins over the rule's default. */
export function resolvePolicy(
  rules: readonly RetentionRule[],
  setting: Record<string, number | null>,
  config: Record<string, string>,
): Map<RetentionRule, Keep> {
  const policy = new Map<RetentionRule, Keep>();
  for (const rule of rules) {
    if (config[rule.name] !== undefined) policy.set(rule, { ms: parseKeep(config[rule.name]), source: 'config' });
    else if (rule.name in setting) policy.set(rule, { ms: setting[rule.name], source: 'setting' });
    else policy.set(rule, { ms: rule.defaultMs, source: 'default' });
  }
  return policy;
}

/** A keep time as the docs write it: `30d`, `36h`, `90m`, or `off`. */
export function formatKeep(ms: number | null): string {
  if (ms === null) return 'off';
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}
