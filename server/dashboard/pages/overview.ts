import { countOwnedDeadDeliveries, paymentsSince } from "../../../store/dashboard-queries";
import type { AppContext } from "../../app-context";
import { requireScope } from "../../keys/authenticator";
import { html, type Html } from "../html";
import { BASE, money } from "../layout";
import type { DashboardSession } from "../session";

const HOUR_MS = 3_600_000;

/** Payments per hour over the last 24 hours as an SVG bar chart, drawn here (no script). */
export function hourlyChart(times: readonly string[], now: number): Html {
  const start = Math.floor(now / HOUR_MS) * HOUR_MS - 23 * HOUR_MS;
  const buckets = new Array<number>(24).fill(0);
  for (const t of times) {
    const i = Math.floor((Date.parse(t) - start) / HOUR_MS);
    if (i >= 0 && i < 24) buckets[i] = (buckets[i] as number) + 1;
  }
  const max = Math.max(1, ...buckets);
  const width = 960;
  const height = 160;
  const bar = width / 24;
  const bars = buckets.map((n, i) => {
    const h = Math.round((n / max) * (height - 30));
    const hour = new Date(start + i * HOUR_MS).getUTCHours();
    return html`<g><rect x="${(i * bar + 2).toFixed(1)}" y="${height - 20 - h}" width="${(bar - 4).toFixed(1)}" height="${h}" fill="#2451c7"><title>${String(hour).padStart(2, "0")}:00 UTC: ${n}</title></rect>${
      i % 3 === 0 ? html`<text x="${(i * bar + bar / 2).toFixed(1)}" y="${height - 5}" font-size="11" text-anchor="middle" fill="#5b6472">${String(hour).padStart(2, "0")}h</text>` : ""
    }</g>`;
  });
  const total = buckets.reduce((a, b) => a + b, 0);
  return html`<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="Payments per hour over the last 24 hours: ${total} in all, at most ${max} in one hour">
<line x1="0" y1="${height - 20}" x2="${width}" y2="${height - 20}" stroke="#d9dde3"/>${bars}</svg>`;
}

export async function overviewPage(app: AppContext, session: DashboardSession): Promise<Html> {
  const { actor } = session;
  requireScope(actor, "payments:read");
  const now = Date.now();
  const midnight = new Date(now);
  midnight.setUTCHours(0, 0, 0, 0);
  const since = new Date(Math.min(midnight.getTime(), now - 24 * HOUR_MS)).toISOString();
  const rows = await paymentsSince(app.db, actor, since);
  const today = rows.filter((r) => r.created_at >= midnight.toISOString());
  const byStatus = new Map<string, number>();
  const volume = new Map<string, number>();
  for (const r of today) {
    byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    if (r.status !== "failed") volume.set(r.currency, (volume.get(r.currency) ?? 0) + r.amount);
  }
  const failed = byStatus.get("failed") ?? 0;
  const failureRate = today.length === 0 ? "—" : `${((failed / today.length) * 100).toFixed(1)} %`;
  const dead = actor.scopes.has("webhooks:read") ? await countOwnedDeadDeliveries(app.db, actor) : undefined;
  const last24 = rows.filter((r) => Date.parse(r.created_at) > now - 24 * HOUR_MS).map((r) => r.created_at);
  return html`<div class="grid">
<div class="stat"><span>Payments today (UTC)</span><b>${today.length}</b></div>
<div class="stat"><span>Volume today</span><b>${volume.size === 0 ? "0" : [...volume].map(([c, a]) => money(a, c)).join(", ")}</b></div>
<div class="stat"><span>Failure rate today</span><b>${failureRate}</b></div>
${dead === undefined ? "" : html`<div class="stat"><span>Dead letters</span><b><a href="${BASE}/webhooks/dead">${dead}</a></b></div>`}
</div>
<h2>By status today</h2>
<div class="table-wrap"><table><thead><tr><th scope="col">Status</th><th scope="col" class="num">Count</th></tr></thead><tbody>
${byStatus.size === 0 ? html`<tr><td colspan="2" class="muted">No payments today.</td></tr>` : [...byStatus].map(([s, n]) => html`<tr><td>${s}</td><td class="num">${n}</td></tr>`)}
</tbody></table></div>
<h2>Payments per hour, last 24 hours (UTC)</h2><div class="card">${hourlyChart(last24, now)}</div>`;
}
