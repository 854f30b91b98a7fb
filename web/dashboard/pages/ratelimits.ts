import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { get } from '../api.js';
import { Card, Empty, ErrorLine, html, useData } from '../ui.js';

interface Point {
  t: number;
  requests: number;
  status_429: number;
  status_503: number;
  limit_requests: number | null;
  remaining_requests: number | null;
  limit_tokens: number | null;
  remaining_tokens: number | null;
}
interface History {
  from: number;
  to: number;
  bucket_seconds: number;
  series: { model: string; points: Point[] }[];
}

const used = (limit: number | null, remaining: number | null) => (limit === null || remaining === null ? null : limit - remaining);

/** Per model, each metric's use against its limit over the last minutes, 429s and 503s marked; per organization, spend. */
export function RateLimits() {
  const [minutes, setMinutes] = useState(10);
  const history = useData(
    () => get<History>(`rate_limits/history?minutes=${minutes}&bucket_seconds=${minutes <= 10 ? 10 : 60}`),
    [minutes],
    5000,
  );
  const config = useData(() => get<{ backend: string }>('rate_limits'), []);
  const orgs = useData(async () => {
    const list = await get<{ data: { id: string; name: string }[] }>('organizations');
    return Promise.all(list.data.map(async (o) => ({ ...o, limits: await get(`rate_limits/organizations/${o.id}`) })));
  }, []);
  return html`<h1>Rate limits</h1>
    <div class="row wrap">
      <label>Window <select value=${minutes} onChange=${(e: Event) => setMinutes(Number((e.target as HTMLSelectElement).value))}>
        <option value="5">5 minutes</option><option value="10">10 minutes</option><option value="60">1 hour</option>
      </select></label>
      <span class="muted">Limiter: ${config.data?.backend ?? '…'} · from the request log's rate-limit headers</span>
    </div>
    <${ErrorLine} error=${history.error || orgs.error} />
    ${
      history.data?.series.length
        ? history.data.series.map((s) => html`<${ModelChart} key=${s.model} model=${s.model} points=${s.points} />`)
        : html`<${Empty}>No /v1 requests in this window.</${Empty}>`
    }
    <${Card} title="Organizations" id="orgs-h">
      <div class="scroll"><table>
        <thead><tr><th>Organization</th><th>Tier</th><th>Spend this month</th><th>Usage limit</th></tr></thead>
        <tbody>${orgs.data?.map(
          (o) =>
            html`<tr>
              <td>${o.name} <small class="muted">${o.id}</small></td>
              <td>${o.limits.tier}</td>
              <td>$${Number(o.limits.usage_this_month_usd).toFixed(4)}</td>
              <td>${o.limits.usage_limit_usd == null ? '—' : `$${o.limits.usage_limit_usd}`}</td>
            </tr>`,
        )}</tbody>
      </table></div>
    </${Card}>`;
}

function ModelChart({ model, points }: { model: string; points: Point[] }) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const last = [...points].reverse().find((p) => p.limit_requests !== null);
  const total429 = points.reduce((n, p) => n + p.status_429, 0);
  const total503 = points.reduce((n, p) => n + p.status_503, 0);
  const data: uPlot.AlignedData = [
    points.map((p) => p.t),
    points.map((p) => p.requests),
    points.map((p) => used(p.limit_requests, p.remaining_requests)),
    points.map((p) => p.limit_requests),
    points.map((p) => (p.status_429 ? p.status_429 : null)),
    points.map((p) => (p.status_503 ? p.status_503 : null)),
  ];
  useEffect(() => {
    if (!el.current) return;
    const width = () => Math.max(280, el.current!.clientWidth);
    const css = getComputedStyle(document.documentElement);
    const c = (v: string) => css.getPropertyValue(v).trim();
    if (!plot.current) {
      plot.current = new uPlot(
        {
          width: width(),
          height: 220,
          axes: [
            { stroke: c('--muted'), grid: { stroke: c('--line') } },
            { stroke: c('--muted'), grid: { stroke: c('--line') } },
          ],
          series: [
            {},
            { label: 'requests', stroke: c('--accent'), width: 2, points: { show: false } },
            { label: 'used (limit − remaining)', stroke: c('--ok'), width: 2, spanGaps: true, points: { show: false } },
            { label: 'limit', stroke: c('--muted'), dash: [6, 4], spanGaps: true, points: { show: false } },
            { label: '429', stroke: c('--bad'), width: 0, points: { show: true, size: 9, fill: c('--bad') } },
            { label: '503', stroke: c('--warn'), width: 0, points: { show: true, size: 9, fill: c('--warn') } },
          ],
        },
        data,
        el.current,
      );
      const resize = () => plot.current?.setSize({ width: width(), height: 220 });
      window.addEventListener('resize', resize);
      return () => {
        window.removeEventListener('resize', resize);
        plot.current?.destroy();
        plot.current = null;
      };
    }
    plot.current.setData(data);
  });
  return html`<${Card} title=${model} id=${`m-${model}`}>
    <p class="row wrap">
      <span>Requests: ${last ? html`<strong>${used(last.limit_requests, last.remaining_requests)}</strong> of ${last.limit_requests} per minute` : 'no limit headers'}</span>
      ${last?.limit_tokens != null ? html`<span>Tokens: <strong>${used(last.limit_tokens, last.remaining_tokens)}</strong> of ${last.limit_tokens} per minute</span>` : null}
      <span class=${total429 ? 'badge bad' : 'badge'}>${total429} × 429</span>
      <span class=${total503 ? 'badge warn' : 'badge'}>${total503} × 503</span>
    </p>
    <div ref=${el} class="chart" role="img" aria-label=${`Requests, use against the limit, 429s and 503s of ${model} over time`}></div>
  </${Card}>`;
}
