import { Type, type Static } from 'typebox';

/** Product filter fields of the spec; `gt`/`gte`/`lt`/`lte` apply only to the numeric ones. */
export const FILTER_FIELDS = [
  'title',
  'body',
  'item_id',
  'offer_id',
  'price',
  'target_url',
  'image_url',
  'product_category',
  'brand',
  'seller_name',
  'external_seller_id',
  'star_rating',
  'condition',
  'age_group',
] as const;
export const NUMERIC_FILTER_FIELDS = ['price', 'star_rating'];
export const OPERATORS = ['in', 'gt', 'gte', 'lt', 'lte'] as const;

export const BidMultiplier = Type.Object(
  { custom_audience_id: Type.String({ maxLength: 200 }), bid_multiplier_micros: Type.Integer() },
  { additionalProperties: false },
);

export const BiddingConfig = Type.Object(
  {
    billing_event_type: Type.Enum(['impression', 'click']),
    max_bid_micros: Type.Integer(),
    custom_audience_bid_multipliers: Type.Optional(Type.Array(BidMultiplier, { maxItems: 100 })),
  },
  { additionalProperties: false },
);

export const ProductFilter = Type.Object(
  {
    field: Type.Enum([...FILTER_FIELDS]),
    operator: Type.Enum([...OPERATORS]),
    values: Type.Array(Type.String({ maxLength: 1000 }), { minItems: 1, maxItems: 1000 }),
  },
  { additionalProperties: false },
);

export const ProductSet = Type.Object(
  { product_feed_id: Type.String({ maxLength: 200 }), filters: Type.Optional(Type.Array(ProductFilter, { maxItems: 100 })) },
  { additionalProperties: false },
);

/** Context hints: free-form text; the spec sets no bound, Standin sets generous ones (docs/ads.md). */
const ContextHints = Type.Array(Type.String({ maxLength: 1000 }), { maxItems: 100 });
const Description = Type.String({ maxLength: 10_000 });

export const CreateAdGroupBody = Type.Object(
  {
    campaign_id: Type.String({ maxLength: 200 }),
    name: Type.String(),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    context_hints: Type.Optional(ContextHints),
    status: Type.Enum(['active', 'paused']),
    bidding_config: BiddingConfig,
    product_set: Type.Optional(ProductSet),
  },
  { additionalProperties: false },
);

export const UpdateAdGroupBody = Type.Object(
  {
    name: Type.Optional(Type.String()),
    description: Type.Optional(Type.Union([Description, Type.Null()])),
    context_hints: Type.Optional(ContextHints),
    status: Type.Optional(Type.Enum(['active', 'paused', 'archived'])),
    bidding_config: Type.Optional(BiddingConfig),
    product_set: Type.Optional(ProductSet),
  },
  { additionalProperties: false },
);

export const ListAdGroupsQuery = Type.Object(
  {
    campaign_id: Type.String({ maxLength: 200 }),
    limit: Type.Optional(Type.Integer()),
    after: Type.Optional(Type.String({ maxLength: 200 })),
    before: Type.Optional(Type.String({ maxLength: 200 })),
    order: Type.Optional(Type.Enum(['asc', 'desc'])),
  },
  { additionalProperties: false },
);

export const ListAudiencesQuery = Type.Object(
  {
    intended_use: Type.Optional(Type.Enum(['bid_multiplier', 'exclusion'])),
    limit: Type.Optional(Type.Integer()),
    after: Type.Optional(Type.String({ maxLength: 200 })),
    before: Type.Optional(Type.String({ maxLength: 200 })),
    order: Type.Optional(Type.Enum(['asc', 'desc'])),
  },
  { additionalProperties: false },
);

export const IdParams = Type.Object({ ad_group_id: Type.String({ maxLength: 200 }) });

export type BiddingConfigT = Static<typeof BiddingConfig>;
export type ProductSetT = Static<typeof ProductSet>;
export type CreateAdGroupInput = Static<typeof CreateAdGroupBody>;
export type UpdateAdGroupInput = Static<typeof UpdateAdGroupBody>;

// Resources of an ad account, as declared in the config file and created through the control plane.
export const AdsKeyConfig = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }), value: Type.Optional(Type.String({ minLength: 20, maxLength: 200 })) },
  { additionalProperties: false },
);
export const FeedConfig = Type.Object(
  { id: Type.Optional(Type.String({ pattern: '^feed_[A-Za-z0-9_-]+$' })), name: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
export const CampaignConfig = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^cmp_[A-Za-z0-9_-]+$' })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    bidding_type: Type.Enum(['impressions', 'clicks', 'conversions'], {
      description: 'conversions = conversion-optimized (oCPC): click billing, CPA bid',
    }),
    product_feed_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: false },
);
/**
 * Config file names that changed: the file uses the API's names. checkConfig (admin/config-file.ts) reads
 * `x-renamed` to answer "'old' is now 'new'" for a key the object does not know.
 */
const AUDIENCE_RENAMED = {
  bid_multiplier_eligible: 'eligible_for_bid_multiplier',
  size_range: 'matched_count_range',
  exclusion_eligible: 'eligible_for_exclusion',
};

export const AudienceConfig = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^aud_[A-Za-z0-9_-]+$' })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    status: Type.Optional(Type.Enum(['ready', 'processing', 'too_small', 'failed'])),
    matched_count_range: Type.Optional(
      Type.Union([Type.String({ maxLength: 100 }), Type.Null()], { description: 'Matched-count range text, e.g. 10000-50000.' }),
    ),
    eligible_for_bid_multiplier: Type.Boolean({
      description: 'Whether ad groups may set bid multipliers for it; never inferred from status or size.',
    }),
    eligible_for_exclusion: Type.Optional(Type.Boolean({ description: 'Default true.' })),
  },
  { additionalProperties: false, 'x-renamed': AUDIENCE_RENAMED },
);
export const AdAccountConfig = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^adacct_[A-Za-z0-9_-]+$' })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    currency: Type.String({ pattern: '^[A-Z]{3}$' }),
    api_keys: Type.Optional(Type.Array(AdsKeyConfig, { maxItems: 100 })),
    product_feeds: Type.Optional(Type.Array(FeedConfig, { maxItems: 1000 })),
    campaigns: Type.Optional(Type.Array(CampaignConfig, { maxItems: 1000 })),
    custom_audiences: Type.Optional(Type.Array(AudienceConfig, { maxItems: 1000 })),
  },
  { additionalProperties: false },
);
const MaxBidsByType = Type.Object(
  {
    impressions: Type.Optional(Type.Integer({ minimum: 1 })),
    clicks: Type.Optional(Type.Integer({ minimum: 1 })),
    conversions: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);
export const AdsRootConfig = Type.Object(
  { max_bid_micros: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Z]{3}$' }), MaxBidsByType)) },
  { additionalProperties: false },
);

// Replies. Ad groups leave the service as stored JSON text (documents.ts), which bypasses the serializer:
// these schemas document it (routes.test.ts holds the replies against them).

const BidMultiplierObject = Type.Object({ custom_audience_id: Type.String(), bid_multiplier_micros: Type.Integer() });
const ProductSetObject = Type.Object({
  product_feed_id: Type.String(),
  filters: Type.Optional(
    Type.Array(
      Type.Object({ field: Type.Enum([...FILTER_FIELDS]), operator: Type.Enum([...OPERATORS]), values: Type.Array(Type.String()) }),
    ),
  ),
});

export const AdGroupObject = Type.Object({
  id: Type.String(),
  created_at: Type.Integer(),
  updated_at: Type.Integer(),
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  context_hints: Type.Array(Type.String()),
  status: Type.Enum(['active', 'paused', 'archived']),
  bidding_config: Type.Object({
    billing_event_type: Type.Enum(['impression', 'click']),
    max_bid_micros: Type.Integer(),
    custom_audience_bid_multipliers: Type.Optional(Type.Array(BidMultiplierObject)),
  }),
  product_set: Type.Optional(ProductSetObject),
});

export const CampaignObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('campaign'),
  name: Type.String(),
  bidding_type: Type.String({ description: 'impressions, clicks or conversions (oCPC)' }),
  product_feed_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.Integer(),
});

export const AudienceObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('custom_audience'),
  name: Type.String(),
  status: Type.String({ description: 'ready, processing, too_small or failed' }),
  matched_count_range: Type.Union([Type.String(), Type.Null()]),
  eligible_for_bid_multiplier: Type.Boolean(),
  eligible_for_exclusion: Type.Boolean(),
  created_at: Type.Integer(),
});

export const FeedObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('product_feed'),
  name: Type.String(),
  created_at: Type.Integer(),
});

export const AdAccountObject = Type.Object({
  object: Type.Literal('ad_account'),
  id: Type.String(),
  organization_id: Type.String(),
  name: Type.String(),
  currency: Type.String(),
  created_at: Type.Integer(),
});

export const AdsKeyObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('ads_api_key'),
  ad_account_id: Type.String(),
  name: Type.String(),
  redacted_value: Type.String(),
  created_at: Type.Integer(),
  value: Type.Optional(Type.String({ description: 'The key, in the answer that created it only.' })),
});

export const IdOnlyParams = Type.Object({ id: Type.String({ maxLength: 200 }) });
export const Page = Type.Object(
  {
    limit: Type.Optional(Type.Integer()),
    after: Type.Optional(Type.String({ maxLength: 200 })),
    before: Type.Optional(Type.String({ maxLength: 200 })),
    order: Type.Optional(Type.Enum(['asc', 'desc'])),
  },
  { additionalProperties: false },
);
export const AdAccountParams = Type.Object({ ad_account_id: Type.String({ maxLength: 200 }) });
export const OrganizationParams = Type.Object({ org_id: Type.String({ maxLength: 200 }) });
export const CreateAdAccountBody = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: '^adacct_[A-Za-z0-9_-]+$' })),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    currency: Type.String({ pattern: '^[A-Z]{3}$' }),
  },
  { additionalProperties: false },
);
