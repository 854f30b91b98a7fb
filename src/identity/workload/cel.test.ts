import { beforeAll, describe, expect, it } from 'vitest';
import { checkAttributeMatch, compileExpressions, evaluateExpressions, ExpressionConfigError, loadCel, matchesAttributes } from './cel.js';
import { AttributeConditionFailed, MappingResolutionFailed } from './errors.js';

const claims = {
  sub: 'repo:acme/api:ref:refs/heads/main',
  iss: 'https://idp',
  exp: 1_900_000_000,
  groups: ['ops', 'dev'],
  repo: 'acme/api',
};

// compileExpressions needs the CEL library, which the service loads on first use.
beforeAll(loadCel);

describe('compileExpressions', () => {
  it('requires the subject mapping', () => {
    expect(() => compileExpressions({ attribute_mapping: { 'attribute.x': 'assertion.sub' } }, 'vendor')).toThrow(/vendor.subject/);
  });

  it('uses the vendor setting for the subject key', () => {
    expect(() => compileExpressions({ attribute_mapping: { 'vendor.subject': 'assertion.sub' } }, 'openai')).toThrow(/openai.subject/);
    expect(() => compileExpressions({ attribute_mapping: { 'openai.subject': 'assertion.sub' } }, 'openai')).not.toThrow();
  });

  it('refuses bad keys, syntax errors, unknown variables and huge expressions, naming the field', () => {
    const bad = (cfg: Parameters<typeof compileExpressions>[0]) => {
      try {
        compileExpressions(cfg, 'vendor');
      } catch (err) {
        expect(err).toBeInstanceOf(ExpressionConfigError);
        return (err as ExpressionConfigError).param;
      }
      throw new Error('accepted');
    };
    expect(bad({ attribute_mapping: { 'vendor.subject': 'assertion.sub', 'Attr.X': 'assertion.sub' } })).toBe('attribute_mapping.Attr.X');
    expect(bad({ attribute_mapping: { 'vendor.subject': 'assertion.sub +' } })).toBe('attribute_mapping.vendor.subject');
    expect(bad({ attribute_mapping: { 'vendor.subject': 'secrets.sub' } })).toBe('attribute_mapping.vendor.subject');
    expect(bad({ attribute_mapping: { 'vendor.subject': 'assertion.sub' }, attribute_condition: 'x == 1' })).toBe('attribute_condition');
    expect(bad({ attribute_mapping: { 'vendor.subject': Array(600).fill('1').join('+') } })).toBe('attribute_mapping.vendor.subject');
    expect(bad({ attribute_mapping: { 'vendor.subject': `"${'a'.repeat(3000)}"` } })).toBe('attribute_mapping.vendor.subject');
  });
});

describe('evaluateExpressions', () => {
  it('derives the subject and attributes, ints as CEL ints', () => {
    const c = compileExpressions(
      {
        attribute_mapping: {
          'vendor.subject': 'assertion.sub',
          'attribute.repo': 'assertion.repo',
          'attribute.late': 'assertion.exp > 1000',
          'attribute.groups': 'assertion.groups',
        },
        attribute_condition: '"ops" in assertion.groups && attribute.repo == "acme/api" && vendor.subject.startsWith("repo:")',
      },
      'vendor',
    );
    const d = evaluateExpressions(c, claims, 'vendor');
    expect(d.subject).toBe(claims.sub);
    expect(d.attributes).toEqual({ 'attribute.repo': 'acme/api', 'attribute.late': true, 'attribute.groups': ['ops', 'dev'] });
  });

  it('reads certificate fields', () => {
    const c = compileExpressions(
      { attribute_mapping: { 'vendor.subject': 'assertion.subject.dn.cn', 'attribute.uri': 'assertion.san.uris[0]' } },
      'vendor',
    );
    const d = evaluateExpressions(c, { subject: { dn: { cn: 'worker-1' } }, san: { uris: ['spiffe://acme/w'] } }, 'vendor');
    expect(d).toEqual({ subject: 'worker-1', attributes: { 'attribute.uri': 'spiffe://acme/w' } });
  });

  it('a false condition is AttributeConditionFailed (invalid_grant)', () => {
    const c = compileExpressions(
      { attribute_mapping: { 'vendor.subject': 'assertion.sub' }, attribute_condition: 'assertion.repo == "other/repo"' },
      'vendor',
    );
    const err = catchOf(() => evaluateExpressions(c, claims, 'vendor'));
    expect(err).toBeInstanceOf(AttributeConditionFailed);
    expect((err as AttributeConditionFailed).code).toBe('invalid_grant');
  });

  it('a condition that cannot evaluate (missing claim) rejects', () => {
    const c = compileExpressions(
      { attribute_mapping: { 'vendor.subject': 'assertion.sub' }, attribute_condition: 'assertion.missing == "x"' },
      'vendor',
    );
    expect(catchOf(() => evaluateExpressions(c, claims, 'vendor'))).toBeInstanceOf(AttributeConditionFailed);
  });

  it('a transformation that fails is mapping resolution (transformation_failed)', () => {
    const c = compileExpressions({ attribute_mapping: { 'vendor.subject': 'assertion.sub', 'attribute.x': 'assertion.nope' } }, 'vendor');
    const err = catchOf(() => evaluateExpressions(c, claims, 'vendor')) as MappingResolutionFailed;
    expect(err).toBeInstanceOf(MappingResolutionFailed);
    expect(err.reason).toBe('transformation_failed');
  });

  it('needs exactly one non-empty subject', () => {
    const cases = ['""', 'assertion.groups', '[]', 'assertion.exp'];
    for (const expr of cases) {
      const c = compileExpressions({ attribute_mapping: { 'vendor.subject': expr } }, 'vendor');
      const err = catchOf(() => evaluateExpressions(c, claims, 'vendor')) as MappingResolutionFailed;
      expect(err, expr).toBeInstanceOf(MappingResolutionFailed);
    }
    const one = compileExpressions({ attribute_mapping: { 'vendor.subject': '[assertion.sub]' } }, 'vendor');
    expect(evaluateExpressions(one, claims, 'vendor').subject).toBe(claims.sub);
  });
});

describe('claims named like Object members', () => {
  it('stay ordinary keys', () => {
    const c = compileExpressions(
      { attribute_mapping: { 'vendor.subject': 'assertion.sub' }, attribute_condition: '!has(assertion.admin)' },
      'vendor',
    );
    const claims = JSON.parse('{"sub":"s","__proto__":{"admin":true}}');
    expect(evaluateExpressions(c, claims, 'vendor').subject).toBe('s');
  });
});

describe('matchesAttributes', () => {
  const derived = { subject: 's1', attributes: { 'attribute.env': 'prod', 'attribute.groups': ['a', 'b'], 'attribute.n': 3 } };
  it('matches derived attributes, raw claims and list membership', () => {
    expect(matchesAttributes({}, derived, claims, 'vendor')).toBe(true);
    expect(matchesAttributes({ 'vendor.subject': 's1', 'attribute.env': 'prod' }, derived, claims, 'vendor')).toBe(true);
    expect(
      matchesAttributes({ 'attribute.groups': 'b', 'attribute.n': '3', 'assertion.repo': 'acme/api' }, derived, claims, 'vendor'),
    ).toBe(true);
    expect(matchesAttributes({ 'attribute.env': 'dev' }, derived, claims, 'vendor')).toBe(false);
    expect(matchesAttributes({ 'assertion.nope.deeper': 'x' }, derived, claims, 'vendor')).toBe(false);
    expect(matchesAttributes({ 'assertion.__proto__': 'x' }, derived, claims, 'vendor')).toBe(false);
  });
  it('checks keys', () => {
    expect(() => checkAttributeMatch({ 'vendor.subject': 'x', 'assertion.sub': 'y', 'attribute.a': 'z' }, 'vendor', 'm')).not.toThrow();
    expect(() => checkAttributeMatch({ foo: 'x' }, 'vendor', 'm')).toThrow(ExpressionConfigError);
    expect(() => checkAttributeMatch({ 'attribute.a': 3 }, 'vendor', 'm')).toThrow(/non-empty string/);
  });
});

function catchOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('did not throw');
}
