import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SeriesCounter, SeriesHistogram } from './series.js';

/** The same observations into prom-client's own metrics and into the series ones: the same scrape, text and JSON. */
describe('series metrics', () => {
  const buckets = [0.001, 0.01, 0.1, 1];
  const observations: [string, number][] = [
    ['/a', 0.0005],
    ['/a', 0.001],
    ['/a', 0.02],
    ['/b', 3],
    ['/a', 0.5],
    ['/b', 0.01],
  ];

  async function scrape(kind: 'prom-client' | 'series') {
    const registry = new Registry();
    const config = { name: 't_seconds', help: 'Test', labelNames: ['route', 'status'] as const, buckets, registers: [registry] };
    const counterConfig = { name: 't_total', help: 'Test count', labelNames: ['route'] as const, registers: [registry] };
    if (kind === 'prom-client') {
      const h = new Histogram(config);
      const c = new Counter(counterConfig);
      for (const [route, v] of observations) {
        h.observe({ route, status: 200 }, v);
        c.inc({ route });
      }
    } else {
      const h = new SeriesHistogram(config);
      const c = new SeriesCounter(counterConfig);
      const series = new Map(['/a', '/b'].map((route) => [route, { h: h.series({ route, status: 200 }), c: c.series({ route }) }]));
      for (const [route, v] of observations) {
        series.get(route)!.h.observe(v);
        series.get(route)!.c.observe(1);
      }
    }
    return { text: await registry.metrics(), json: await registry.getMetricsAsJSON() };
  }

  it('scrapes as prom-client’s Histogram and Counter do', async () => {
    const own = await scrape('prom-client');
    const series = await scrape('series');
    expect(series.text).toBe(own.text);
    expect(series.json).toEqual(own.json);
    expect(series.text).toContain('t_seconds_bucket{le="0.001",route="/a",status="200"} 2');
    expect(series.text).toContain('t_seconds_bucket{le="+Inf",route="/b",status="200"} 2');
    expect(series.text).toContain('t_total{route="/a"} 4');
  });

  it('counts on after a scrape, and a reset empties the histogram', async () => {
    const registry = new Registry();
    const h = new SeriesHistogram({ name: 'r_seconds', help: 'R', labelNames: ['route'] as const, buckets, registers: [registry] });
    const c = new SeriesCounter({ name: 'r_total', help: 'R', labelNames: ['route'] as const, registers: [registry] });
    const s = h.series({ route: '/x' });
    const n = c.series({ route: '/x' });
    s.observe(0.05);
    n.observe(1);
    await registry.metrics();
    s.observe(0.05);
    n.observe(2);
    const text = await registry.metrics();
    expect(text).toContain('r_seconds_count{route="/x"} 2');
    expect(text).toContain('r_total{route="/x"} 3');
    h.reset();
    expect(await registry.metrics()).not.toContain('r_seconds_count');
  });
});
