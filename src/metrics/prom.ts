// The four classes of prom-client Standin uses, from their own files: the package's index also loads its
// default process metrics (and @opentelemetry/api with them), the push gateway client and the cluster
// aggregator, which Standin never uses: a tenth of the bundle's load at every start (bench/cold-start.mjs).
import type * as Prom from 'prom-client';
import counter from 'prom-client/lib/counter.js';
import gauge from 'prom-client/lib/gauge.js';
import histogram from 'prom-client/lib/histogram.js';
import registry from 'prom-client/lib/registry.js';

export const Counter = counter as typeof Prom.Counter;
export type Counter<T extends string = string> = Prom.Counter<T>;
export const Gauge = gauge as typeof Prom.Gauge;
export type Gauge<T extends string = string> = Prom.Gauge<T>;
export const Histogram = histogram as typeof Prom.Histogram;
export type Histogram<T extends string = string> = Prom.Histogram<T>;
export const Registry = registry as typeof Prom.Registry;
export type Registry = Prom.Registry;
export type { CounterConfiguration, HistogramConfiguration } from 'prom-client';
