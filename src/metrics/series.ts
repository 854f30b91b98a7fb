import { Counter, Histogram, type CounterConfiguration, type HistogramConfiguration } from './prom.js';

/** One series of a metric, held by the caller (one per label set): adding to it hashes nothing. */
export interface Observer {
  observe(value: number): void;
}

/**
 * prom-client's Histogram (its registry, name, help and exposition) whose series are counted here, in
 * arrays: prom-client's own observe hashes the label set into a string and looks it up at every call,
 * half a microsecond of a request that costs twenty (bench/metrics.mjs). At scrape time the series are
 * read out in the shape prom-client's Histogram reads out its own (cumulative buckets, +Inf, sum, count),
 * so the exposition is prom-client's, byte for byte (series.test.ts).
 */
export class SeriesHistogram<T extends string> extends Histogram<T> {
  readonly #name: string;
  readonly #help: string;
  readonly #bounds: number[];
  readonly #series: { labels: Partial<Record<T, string | number>>; counts: Float64Array; sum: number; count: number }[] = [];

  constructor(config: HistogramConfiguration<T> & { buckets: number[] }) {
    super(config);
    this.#name = config.name;
    this.#help = config.help;
    this.#bounds = [...config.buckets].sort((a, b) => a - b);
  }

  /** The series of `labels`, made once and kept by the caller (a second call makes a second series). */
  series(labels: Partial<Record<T, string | number>>): Observer {
    const bounds = this.#bounds;
    const s = { labels, counts: new Float64Array(bounds.length), sum: 0, count: 0 };
    this.#series.push(s);
    return {
      observe(value) {
        // prom-client's bucket: the first bound the value does not exceed (none: only in +Inf).
        let i = 0;
        while (i < bounds.length && value > bounds[i]) i++;
        if (i < bounds.length) s.counts[i]++;
        s.sum += value;
        s.count++;
      },
    };
  }

  /** What the registry reads at scrape time (prom-client's Histogram: `get` is this, its labels splayed). */
  async getForPromString() {
    const bucket = `${this.#name}_bucket`;
    const values = [];
    for (const s of this.#series) {
      if (s.count === 0) continue;
      let acc = 0;
      for (const [i, le] of this.#bounds.entries()) {
        acc += s.counts[i];
        values.push({ labels: { le }, sharedLabels: s.labels, value: acc, metricName: bucket, exemplar: null });
      }
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucket, exemplar: null },
        { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.#name}_sum` },
        { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.#name}_count` },
      );
    }
    return { name: this.#name, help: this.#help, type: 'histogram' as const, values, aggregator: 'sum' as const };
  }

  override reset(): void {
    super.reset();
    // prom-client's constructor resets before this class's fields exist.
    if (!(#series in this)) return;
    for (const s of this.#series) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}

/**
 * prom-client's Counter whose series are counted here and added to it when scraped (`inc` by the amount
 * since the last scrape): the counter's own `inc` hashes the label set at every call.
 */
export class SeriesCounter<T extends string> extends Counter<T> {
  readonly #pending: { labels: Partial<Record<T, string | number>>; n: number }[];

  constructor(config: CounterConfiguration<T>) {
    const pending: { labels: Partial<Record<T, string | number>>; n: number }[] = [];
    super({
      ...config,
      collect() {
        for (const p of pending)
          if (p.n > 0) {
            this.inc(p.labels, p.n);
            p.n = 0;
          }
      },
    });
    this.#pending = pending;
  }

  /** The series of `labels`, made once and kept by the caller: `observe(n)` adds n. */
  series(labels: Partial<Record<T, string | number>>): Observer {
    const p = { labels, n: 0 };
    this.#pending.push(p);
    return {
      observe(n) {
        p.n += n;
      },
    };
  }
}
