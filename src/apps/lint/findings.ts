/** One lint or submission finding: what rule, where (a JSON path), and a message a person can act on. */
export interface Finding {
  severity: 'error' | 'warning';
  rule: string;
  path: string;
  message: string;
}

/** Appends a path segment in JSONPath style: `$.tools.search`, `$.test_cases[2]`, `$._meta["vendor/profile"]`. */
export function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** Sorts findings errors first, then by path, so output is stable. */
export function sortFindings(findings: Finding[]): Finding[] {
  return [...findings].sort(
    (a, b) =>
      (a.severity === b.severity ? 0 : a.severity === 'error' ? -1 : 1) || a.path.localeCompare(b.path) || a.rule.localeCompare(b.rule),
  );
}

/** True when any finding is an error. */
export const hasErrors = (findings: Finding[]) => findings.some((f) => f.severity === 'error');

/** Renders findings for a terminal, one per line: `error  rule  path  message`. */
export function formatFindings(findings: Finding[]): string {
  if (findings.length === 0) return 'no findings';
  const lines = sortFindings(findings).map(
    (f) => `${f.severity === 'error' ? 'error  ' : 'warning'}  ${f.path}  ${f.message}  [${f.rule}]`,
  );
  const errors = findings.filter((f) => f.severity === 'error').length;
  lines.push(`${errors} error(s), ${findings.length - errors} warning(s)`);
  return lines.join('\n');
}
