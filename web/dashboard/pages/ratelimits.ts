import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import type {
  History,
  HistoryPoint,
  List,
  Organization,
  OrganizationRateLimits,
  RateLimits as Config,
} from '../../../src/dashboard/wire.js';
import { get } from '../api.js';
import { Card, Empty, ErrorLine, html, useDark, useData } from '../ui.js';

const used = (limit: number | null, remaining: number | null) => (limit === null || remaining === null ? null : limit - remaining);

/** Tick spacings of the time axis, in seconds: the first that gives at most one label per ~90 px. */
const STEPS = [60, 120, 300, 600, 900, 1800, 3600, 7200, 14400];
const xStep = (seconds: number, width: number) => STEPS.find((s) => seconds / s <= Math.max(2, Math.floor(width / 90))) ?? STEPS.at(-1)!;
const hhmm = (s: number) => new Date(s * 1000).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', hour12: false });

/** `rgb(r, g, b)` at 15 % opacity (the fill under the use). */
const fade = (rgb: string) => rgb.replace(/^rgb\((.*)\)$/, 'rgba($1, 0.15)');

/** The limit the replies reported, drawn across the whole window (a limit holds between the requests that report it). */
function limitLine(points: HistoryPoint[]): (number | null)[] {
  let last: number | null = points.find((p) => p.limit_requests !== null)?.limit_requests ?? null;
  return points.map((p) => (last = p.limit_requests ?? last));
}

/** Per model (or route), requests and use against the limit over the last minutes, 429s and 503s marked; per organization, spend. */
export function RateLimits() {
  const [minutes, setMinutes] = useState(10);
  const bucket = minutes <= 10 ? 10 : 60;
  const history = useData(() => get<History>(`rate_limits/history?minutes=${minutes}&bucket_seconds=${bucket}`), [minutes], 5000);
  const config = useData(() => get<Config>('rate_limits'), []);
  const orgs = useData(async () => {
    const list = await get<List<Organization>>('organizations');
    return Promise.all(
      list.data.map(async (o) => ({ ...o, limits: await get<OrganizationRateLimits>(`rate_limits/organizations/${o.id}`) })),
    );
  }, []);
  const h = history.data;
  return html`<h1>Rate limits</h1>
    <div class="row wrap">
      <label>Window <select value=${minutes} onChange=${(e: Event) => setMinutes(Number((e.target as HTMLSelectElement).value))}>
        <option value="5">5 minutes</option><option value="10">10 minutes</option><option value="60">1 hour</option>
      </select></label>
      <span class="muted">Limiter: ${config.data?.backend ?? '…'} · from the request log's rate-limit headers · requests without a model are grouped by their route</span>
    </div>
    <${ErrorLine} error=${history.error || orgs.error} />
    ${
      h?.series.length
        ? h.series.map(
            (s) =>
              html`<${ModelChart}
                key=${s.model}
                model=${s.model}
                points=${s.points}
                from=${h.from}
                to=${h.to}
                bucket=${h.bucket_seconds}
              />`,
          )
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
              <td>$${o.limits.usage_this_month_usd.toFixed(4)}</td>
              <td>${o.limits.usage_limit_usd == null ? '—' : `$${o.limits.usage_limit_usd}`}</td>
            </tr>`,
        )}</tbody>
      </table></div>
    </${Card}>`;
}

/** The current use beside its limit: "12 of 500 per minute" and a bar of the share. */
function Meter({ label, use, limit }: { label: string; use: number | null; limit: number | null }) {
  if (limit === null || use === null) return html`<span>${label}: <span class="muted">no limit headers</span></span>`;
  const share = limit ? Math.min(1, use / limit) : 0;
  const tone = share >= 0.9 ? 'bad' : share >= 0.6 ? 'warn' : 'ok';
  return html`<span class="meter">
    <span>${label}: <strong>${use}</strong> of ${limit} per minute</span>
    <span class="bar" role="meter" aria-label=${`${label} used of the limit`} aria-valuemin="0" aria-valuemax=${limit} aria-valuenow=${use}>
      <span class=${`seg ${tone}`} style=${`width:${Math.max(share * 100, use ? 1 : 0)}%`}></span>
    </span>
    <small class="muted">${Math.round(share * 1000) / 10} %</small>
  </span>`;
}

function ModelChart({
  model,
  points,
  from,
  to,
  bucket,
}: {
  model: string;
  points: HistoryPoint[];
  from: number;
  to: number;
  bucket: number;
}) {
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const dark = useDark();
  const last = [...points].reverse().find((p) => p.limit_requests !== null);
  const total429 = points.reduce((n, p) => n + p.status_429, 0);
  const total503 = points.reduce((n, p) => n + p.status_503, 0);
  const limits = limitLine(points);
  const hasLimit = limits.some((l) => l !== null);
  const data: uPlot.AlignedData = [
    points.map((p) => p.t),
    ...(hasLimit ? [points.map((p) => used(p.limit_requests, p.remaining_requests)), limits] : []),
    points.map((p) => p.requests),
    points.map((p) => (p.status_429 ? p.status_429 : null)),
    points.map((p) => (p.status_503 ? p.status_503 : null)),
  ];
  const shape = `${dark}-${from - (from % 60)}-${to - from}-${bucket}-${hasLimit}`;
  // Built again when the theme, the window or the bucket change; otherwise only its data moves.
  useEffect(() => {
    if (!el.current) return;
    const box = el.current;
    const width = () => Math.max(280, box.clientWidth);
    // The palette's light-dark() colours, resolved by the browser for the theme in force (a canvas cannot read them).
    const probe = document.createElement('span');
    box.append(probe);
    const c = (v: string) => ((probe.style.color = `var(${v})`), getComputedStyle(probe).color);
    const [muted, line, accent, ok, bad, warn, text] = ['--muted', '--line', '--accent', '--ok', '--bad', '--warn', '--text'].map(c);
    probe.remove();
    const axis = {
      stroke: muted,
      grid: { stroke: line, width: 1 },
      ticks: { stroke: line, width: 1 },
      labelFont: '12px system-ui',
      font: '12px system-ui',
    };
    const make = () =>
      new uPlot(
        {
          width: width(),
          height: 240,
          legend: { live: false },
          cursor: { drag: { x: false, y: false } },
          scales: {
            x: { time: true, range: [from, to] },
            y: { range: (_u, _min, max) => [0, max * 1.1] },
            n: { range: (_u, _min, max) => [0, Math.max(4, max)] },
          },
          axes: [
            { ...axis, incrs: [xStep(to - from, width())], values: (_u: uPlot, splits: number[]) => splits.map(hhmm) },
            ...(hasLimit ? [{ ...axis, scale: 'y', label: 'requests per minute', size: 56 }] : []),
            {
              ...axis,
              scale: 'n',
              side: hasLimit ? 1 : 3,
              label: `requests per ${bucket} s`,
              size: 56,
              grid: { show: !hasLimit, stroke: line, width: 1 },
            },
          ],
          series: [
            {},
            ...(hasLimit
              ? [
                  {
                    label: 'used of the limit (limit − remaining)',
                    scale: 'y',
                    stroke: ok,
                    fill: fade(ok),
                    width: 2,
                    spanGaps: true,
                    points: { show: false },
                  },
                  { label: 'limit', scale: 'y', stroke: text, dash: [6, 4], width: 1.5, points: { show: false } },
                ]
              : []),
            { label: `requests per ${bucket} s`, scale: 'n', stroke: accent, width: 2, points: { show: false } },
            { label: '429', scale: 'n', stroke: bad, width: 0, points: { show: true, size: 9, fill: bad } },
            { label: '503', scale: 'n', stroke: warn, width: 0, points: { show: true, size: 9, fill: warn } },
          ],
        },
        data,
        box,
      );
    plot.current = make();
    const resize = () => {
      plot.current?.destroy();
      plot.current = make();
    };
    const observer = new ResizeObserver(() => plot.current && Math.abs(plot.current.width - width()) > 8 && resize());
    observer.observe(box);
    return () => {
      observer.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [shape]);
  useEffect(() => {
    plot.current?.setData(data);
  });
  return html`<${Card} title=${model} id=${`m-${model}`}>
    <p class="row wrap">
      <${Meter} label="Requests" use=${last ? used(last.limit_requests, last.remaining_requests) : null} limit=${last?.limit_requests ?? null} />
      ${last?.limit_tokens != null ? html`<${Meter} label="Tokens" use=${used(last.limit_tokens, last.remaining_tokens)} limit=${last.limit_tokens} />` : null}
      <span class=${total429 ? 'badge bad' : 'badge'}>${total429} × 429</span>
      <span class=${total503 ? 'badge warn' : 'badge'}>${total503} × 503</span>
    </p>
    <div ref=${el} class="chart" role="img" aria-label=${`Use against the limit, requests, 429s and 503s of ${model} from ${hhmm(from)} to ${hhmm(to)}`}></div>
  </${Card}>`;
}
