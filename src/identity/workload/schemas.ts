import { Type, type TSchema } from 'typebox';
import { AnyObject, Deleted, ListOf } from '../../core/schemas.js';
import { PermissionsSchema } from '../schemas.js';
import { ASYMMETRIC_ALGS } from './jwt.js';

/** TypeBox schemas of the workload identity config sections, admin API bodies and replies. */
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
  audiences: Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), {
    minItems: 1,
    maxItems: 20,
    description: "jwt: 'aud' must name one of these.",
  }),
  algorithms: Type.Array(Alg, {
    minItems: 1,
    maxItems: ASYMMETRIC_ALGS.length,
    description: 'jwt: allowed signature algorithms (asymmetric only). Default RS256, ES256.',
  }),
  jwks_url: Type.String({
    pattern: '^https?://',
    maxLength: 2000,
    description: 'jwt: where the signing keys are fetched (through the SSRF guard).',
  }),
  jwks: Type.Object(
    { keys: Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 100 }) },
    { additionalProperties: false, description: 'jwt: the signing keys, inline.' },
  ),
  spiffe_trust_domain: Type.String({
    pattern: '^[a-z0-9._-]{1,255}$',
    description: "jwt: tokens are SPIFFE JWT-SVIDs whose 'sub' is a SPIFFE ID in this trust domain.",
  }),
  attribute_condition: Type.String({ minLength: 1, maxLength: 2048, description: 'CEL boolean over assertion, attribute and <vendor>.' }),
  attribute_mapping: StringMap(
    "'<vendor>.subject' and 'attribute.<name>' → CEL over assertion. Default: subject = assertion.sub (jwt) or assertion.subject.dn.cn (x509).",
  ),
};
const providerFields = Object.fromEntries(Object.entries(P).map(([k, v]) => [k, Type.Optional(v)])) as {
  [K in keyof typeof P]: ReturnType<typeof Type.Optional<(typeof P)[K]>>;
};

export const MappingFields = {
  name: Name,
  service_account_id: Type.String({ minLength: 1, maxLength: 200 }),
  project_id: Type.String({ minLength: 1, maxLength: 200 }),
  enabled: Type.Optional(Type.Boolean({ description: 'Default true.' })),
  attribute_match: Type.Optional(
    StringMap("Keys '<vendor>.subject', 'attribute.<name>' or 'assertion.<claim path>' → the exact value required."),
  ),
  permissions: Type.Optional(Type.Union([PermissionsSchema, Type.Null()])),
};

export const MappingBody = Type.Object(
  { id: Type.Optional(Type.String({ pattern: '^idpmap_[A-Za-z0-9_-]{1,100}$' })), ...MappingFields },
  { additionalProperties: false },
);
export const MappingUpdateBody = Type.Partial(Type.Object(MappingFields, { additionalProperties: false }), { additionalProperties: false });

export const ProviderBody = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^idp_[A-Za-z0-9_-]{1,100}$' })),
    kind: Type.Union([Type.Literal('jwt'), Type.Literal('x509')]),
    ...providerFields,
    name: Name,
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
    key_types: Type.Optional(
      Type.Array(
        Type.Union([Type.Literal('rsa'), Type.Literal('rsa-pss'), Type.Literal('ec'), Type.Literal('ed25519'), Type.Literal('ed448')]),
        { minItems: 1, maxItems: 5 },
      ),
    ),
    min_rsa_bits: Type.Optional(Type.Integer({ minimum: 1024, maximum: 16384 })),
    ec_curves: Type.Optional(
      Type.Array(Type.Union([Type.Literal('P-256'), Type.Literal('P-384'), Type.Literal('P-521')]), { minItems: 1, maxItems: 3 }),
    ),
    max_chain_depth: Type.Optional(Type.Integer({ minimum: 0, maximum: 8 })),
    max_leaf_lifetime_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3650 })),
  },
  { additionalProperties: false, description: 'Certificate-admission rules applied to leaves that chain to this root.' },
);

const rootFields = {
  name: Name,
  project_id: Type.Optional(
    Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()], {
      description: 'Active for this project only; omitted: the whole organization.',
    }),
  ),
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
  {
    cidrs: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      maxItems: LIMITS.cidrsPerProject,
      description: 'Addresses or CIDRs; empty: no restriction.',
    }),
  },
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

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const Id = Type.String({ maxLength: 200 });

/** Path parameters of the admin routes. */
export const OrgParams = Type.Object({ org_id: Id });
export const OrgProviderParams = Type.Object({ org_id: Id, provider_id: Id });
export const OrgProviderMappingParams = Type.Object({ org_id: Id, provider_id: Id, mapping_id: Id });
export const OrgRootParams = Type.Object({ org_id: Id, root_id: Id });
export const ProjectParams = Type.Object({ project_id: Id });

/** A mapping as the admin API shows it (`store.Mapping`). */
export const MappingObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('organization.identity_provider.mapping'),
  provider_id: Type.String(),
  name: Type.String(),
  service_account_id: Type.String(),
  project_id: Type.String(),
  enabled: Type.Boolean(),
  attribute_match: Type.Record(Type.String(), Type.String()),
  permissions: Nullable(PermissionsSchema),
  created_at: Type.Integer(),
});

const providerObjectFields = {
  id: Type.String(),
  object: Type.Literal('organization.identity_provider'),
  organization_id: Type.String(),
  name: Type.String(),
  kind: Type.Union([Type.Literal('jwt'), Type.Literal('x509')]),
  enabled: Type.Boolean(),
  issuer: Nullable(Type.String()),
  audiences: Nullable(Type.Array(Type.String())),
  algorithms: Nullable(Type.Array(Type.String())),
  jwks_url: Nullable(Type.String()),
  jwks: Nullable(Type.Object({ keys: Type.Array(AnyObject) })),
  spiffe_trust_domain: Nullable(Type.String()),
  attribute_condition: Nullable(Type.String()),
  attribute_mapping: Type.Record(Type.String(), Type.String()),
  version: Type.Integer(),
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
};
/** A provider (`store.Provider`), with its mappings as every provider reply carries them. */
export const ProviderObject = Type.Object({ ...providerObjectFields, mappings: Type.Array(MappingObject) });

/** The admission rules of a root, all of them (`x509.AdmissionRules`). */
const AdmissionObject = Type.Object({
  require_digital_signature: Type.Boolean(),
  client_auth_eku: Type.Union([Type.Literal('when_present'), Type.Literal('required')]),
  key_types: Type.Array(Type.String()),
  min_rsa_bits: Type.Integer(),
  ec_curves: Type.Array(Type.String()),
  max_chain_depth: Type.Integer(),
  max_leaf_lifetime_days: Type.Integer(),
});

/** An mTLS root (`store.MtlsRoot`). */
export const RootObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('organization.mtls_root'),
  organization_id: Type.String(),
  project_id: Nullable(Type.String()),
  name: Type.String(),
  certificate: Type.String(),
  fingerprint_sha256: Type.String(),
  subject: Type.String(),
  not_before: Type.Integer(),
  not_after: Type.Integer(),
  status: Type.Union([Type.Literal('active'), Type.Literal('retired')]),
  admission: AdmissionObject,
  created_at: Type.Integer(),
  retired_at: Nullable(Type.Integer()),
});

/** An entry of the exchange audit log (`store.Exchange`). */
export const ExchangeObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('organization.workload_identity.exchange'),
  organization_id: Nullable(Type.String()),
  provider_id: Nullable(Type.String()),
  mapping_id: Nullable(Type.String()),
  service_account_id: Nullable(Type.String()),
  subject: Nullable(Type.String()),
  via: Nullable(Type.Union([Type.Literal('jwt'), Type.Literal('x509')])),
  outcome: Type.Union([Type.Literal('issued'), Type.Literal('refused')]),
  error: Nullable(Type.String()),
  category: Nullable(Type.String()),
  reason: Nullable(Type.String()),
  token_id: Nullable(Type.String()),
  certificate_sha256: Nullable(Type.String()),
  client_ip: Nullable(Type.String()),
  created_at: Type.Integer(),
});

export const AllowlistObject = Type.Object({
  object: Type.Literal('project.ip_allowlist'),
  project_id: Type.String(),
  cidrs: Type.Array(Type.String()),
});
export const ServerCertificateObject = Type.Object({ object: Type.Literal('mtls.server_certificate'), certificate: Type.String() });

export const ProviderList = ListOf(ProviderObject);
export const MappingList = ListOf(MappingObject);
export const RootList = ListOf(RootObject);
export const ExchangeList = ListOf(ExchangeObject);
export const ProviderDeleted = Deleted('organization.identity_provider.deleted');
export const MappingDeleted = Deleted('organization.identity_provider.mapping.deleted');
export const RootDeleted = Deleted('organization.mtls_root.deleted');

/** The token exchange response (spec section A). */
export const TokenResponseObject = Type.Object({
  access_token: Type.String(),
  issued_token_type: Type.Literal('urn:ietf:params:oauth:token-type:access_token'),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ minimum: 1, maximum: 3600 }),
  scope: Type.Optional(Type.String()),
});

/** An RFC 6749 §5.2 error reply of the token endpoint. */
export const OAuthErrorObject = Type.Object({ error: Type.String(), error_description: Type.String() });
