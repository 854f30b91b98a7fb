/**
 * The maximum `max_bid_micros` per campaign bidding type and account currency. The spec leaves the
 * figures open; 100000000 micros (100 units) has been seen on the real platform for USD. Other
 * currencies scale by a rounded rate so a bid cap means about the same everywhere. Configurable in the
 * config file (`ads.max_bid_micros`), per currency and bidding type.
 */
export type BiddingType = 'impressions' | 'clicks' | 'conversions';
export type MaxBidTable = Record<string, Partial<Record<BiddingType, number>>>;

const UNITS_PER_USD: Record<string, number> = {
  USD: 1,
  EUR: 1,
  GBP: 1,
  CHF: 1,
  CAD: 1.5,
  AUD: 1.5,
  NZD: 1.5,
  SGD: 1.5,
  JPY: 150,
  KRW: 1400,
  INR: 85,
  BRL: 5,
  MXN: 20,
  SEK: 10,
  NOK: 10,
  DKK: 7,
  PLN: 4,
  ZAR: 18,
  HKD: 8,
};

export const SUPPORTED_CURRENCIES = Object.keys(UNITS_PER_USD);

/** The built-in table: 100 USD per billing event for every bidding type, scaled per currency. */
export function defaultMaxBids(): MaxBidTable {
  const table: MaxBidTable = {};
  for (const [currency, rate] of Object.entries(UNITS_PER_USD)) {
    const max = 100_000_000 * rate;
    table[currency] = { impressions: max, clicks: max, conversions: max };
  }
  return table;
}

/** The table with the config file's overrides applied. */
export function withOverrides(overrides: MaxBidTable | undefined): MaxBidTable {
  const table = defaultMaxBids();
  for (const [currency, byType] of Object.entries(overrides ?? {})) table[currency] = { ...table[currency], ...byType };
  return table;
}

export function maxBidMicros(table: MaxBidTable, currency: string, biddingType: BiddingType): number {
  return table[currency]?.[biddingType] ?? 100_000_000;
}
