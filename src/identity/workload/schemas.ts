import { Type } from 'typebox';
import { PermissionsSchema } from '../schemas.js';
import { ASYMMETRIC_ALGS } from './jwt.js';

/** TypeBox schemas of the workload identity config sections and admin API bodies. */
export const LIMITS = { providersPerOrganization: 50, mappingsPerProvider: 50, rootsPerOrganization: 100, cidrsPerProject: 100 } as const;

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Alg = Type.Union(ASYMMETRIC_ALGS.map((a) => Type.Literal(a)));
const StringMap = (description: string) =>
  Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Type.String({ minLength: 1, maxLength: 2048 }), { description });

/** Provider fields, each required here; the bodies make them optional. */
const P = {
  name: Name,
  enabled: Type.Boolean({ description: 'Default true.' }),
  issuer: Type.String({ minLength: 1, maxLength: 1000, description: "jwt: the tokens' exact 'iss'." }),
  audiences: Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), { minItems: 1, maxItems: 20, description: "jwt: 'aud' must name one of these." }),
  algorithms: Type.Array(Alg, { minItems: 1, maxItems: ASYMMETRIC_ALGS.length, description: 'jwt: allowed signature algorithms (asymmetric only). Default RS256, ES256.' }),
  jwks_url: Type.String({ pattern: '^https?://', maxLength: 2000, description: 'jwt: where the signing keys are fetched (through the SSRF guard).' }),
  jwks: Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 100 }) }, { additionalProperties: false, description: 'jwt: the signing keys, inline.' }),
  spiffe_trust_domain: Type.String({ pattern: '^[a-z0-9._-]{1,255}$', description: "jwt: tokens are SPIFFE JWT-SVIDs whose 'sub' is a SPIFFE ID in this trust domain." }),
  attribute_condition: Type.String({ minLength: 1, maxLength: 2048, description: 'CEL boolean over assertion, attribute and <vendor>.' }),
  attribute_mapping: StringMap("'<vendor>.subject' and 'attribute.<name>' → CEL over assertion. Default: subject = assertion.sub (jwt) or assertion.subject.dn.cn (x509)."),
};
const providerFields = Object.fromEntries(Object.entries(P).map(([k, v]) => [k, Type.Optional(v)])) as { [K in keyof typeof P]: ReturnType<typeof Type.Optional<(typeof P)[K]>> };

export const MappingFields = {
  name: Name,
  service_account_id: Type.String({ minLength: 1, maxLength: 200 }),
  project_id: Type.String({ minLength: 1, maxLength: 200 }),
  enabled: Type.Optional(Type.Boolean({ description: 'Default true.' })),
  attribute_match: Type.Optional(StringMap("Keys '<vendor>.subject', 'attribute.<name>' or 'assertion.<claim path>' → the exact value required.")),
  permissions: Type.Optional(Type.Union([PermissionsSchema, Type.Null()])),
};

export const MappingBody = Type.Object({ id: Type.Optional(Type.String({ pattern: '^idpmap_[A-Za-z0-9_-]{1,100}$' })), ...MappingFields }, { additionalProperties: false });
export const MappingUpdateBody = Type.Partial(Type.Object(MappingFields, { additionalProperties: false }), { additionalProperties: false });

export const ProviderBody = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^idp_[A-Za-z0-9_-]{1,100}$' })),
    kind: Type.Union([Type.Literal('jwt'), Type.Literal('x509')]),
    ...providerFields,
    mappings: Type.Optional(Type.Array(MappingBody, { maxItems: LIMITS.mappingsPerProvider })),
  },
  { additionalProperties: false },
);
// In an update, null clears a field (a condition, a trust domain, or one key source when switching to the other).
export const ProviderUpdateBody = Type.Object(
  {
    ...providerFields,
    jwks_url: Type.Optional(Type.Union([P.jwks_url, Type.Null()])),
    jwks: Type.Optional(Type.Union([P.jwks, Type.Null()])),
    spiffe_trust_domain: Type.Optional(Type.Union([P.spiffe_trust_domain, Type.Null()])),
    attribute_condition: Type.Optional(Type.Union([P.attribute_condition, Type.Null()])),
  },
  { additionalProperties: false },
);

export const AdmissionSchema = Type.Object(
  {
    require_digital_signature: Type.Optional(Type.Boolean()),
    client_auth_eku: Type.Optional(Type.Union([Type.Literal('when_present'), Type.Literal('required')])),
    key_types: Type.Optional(Type.Array(Type.Union(['rsa', 'rsa-pss', 'ec', 'ed25519', 'ed448'].map((k) => Type.Literal(k))), { minItems: 1, maxItems: 5 })),
    min_rsa_bits: Type.Optional(Type.Integer({ minimum: 1024, maximum: 16384 })),
    ec_curves: Type.Optional(Type.Array(Type.Union(['P-256', 'P-384', 'P-521'].map((k) => Type.Literal(k))), { minItems: 1, maxItems: 3 })),
    max_chain_depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 8 })),
    max_leaf_lifetime_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
  },
  { additionalProperties: false, description: 'Certificate-admission rules applied to leaves that chain to this root.' },
);

const rootFields = {
  name: Name,
  project_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], { description: 'Active for this project only; omitted: the whole organization.' })),
  status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('retired')])),
  admission: Type.Optional(AdmissionSchema),
};
export const RootBody = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^mtlsroot_[A-Za-z0-9_-]{1,100}$' })),
    certificate: Type.String({ minLength: 1, maxLength: 20_000, description: 'The root CA certificate, PEM.' }),
    ...rootFields,
  },
  { additionalProperties: false },
);
export const RootUpdateBody = Type.Partial(Type.Object(rootFields, { additionalProperties: false }), { additionalProperties: false });

export const IpAllowlistBody = Type.Object(
  { cidrs: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: LIMITS.cidrsPerProject, description: 'Addresses or CIDRs; empty: no restriction.' }) },
  { additionalProperties: false },
);

export const ExchangesQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
    after: Type.Optional(Type.String({ maxLength: 200 })),
    before: Type.Optional(Type.String({ maxLength: 200 })),
    order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
    provider_id: Type.Optional(Type.String({ maxLength: 200 })),
    outcome: Type.Optional(Type.Union([Type.Literal('issued'), Type.Literal('refused')])),
  },
  { additionalProperties: false },
);

export const ImageAuditBody = Type.Object(
  {
    reason: Type.String({ minLength: 1, maxLength: 1000 }),
    image_ids: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 })),
  },
  { additionalProperties: false },
);
