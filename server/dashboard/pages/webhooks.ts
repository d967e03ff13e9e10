import type { OwnedDeliveryRow } from "../../../store/dashboard-queries";
import { EVENT_TYPES } from "../../events/event";
import type { WebhookEndpoint } from "../../webhooks/endpoints";
import { html, type Html } from "../html";
import { badge, BASE, csrfField, idempotencyField, time } from "../layout";
import type { DashboardSession } from "../session";

/** A plaintext secret, shown in the one answer that carries it, with a copy button. */
export const secretBox = (label: string, secret: string): Html =>
  html`<div class="card" role="region" aria-label="${label}"><p><b>${label}</b>: shown once, copy it now.</p><div class="secret"><code id="secret-value">${secret}</code><button type="button" class="secondary" data-copy="secret-value">Copy</button></div></div>`;

export function endpointsPage(session: DashboardSession, endpoints: readonly WebhookEndpoint[], secret?: Html): Html {
  const writable = session.actor.scopes.has("webhooks:write");
  const action = (e: WebhookEndpoint, name: string, label: string, question?: string, extra: Html = html``, cls = "secondary") =>
    html`<form method="post" action="${BASE}/webhooks/${e.id}/${name}" class="inline"${question ? html` data-confirm="${question}"` : ""}>${csrfField(session)}${idempotencyField()}${extra}<button type="submit" class="${cls}">${label}</button></form>`;
  const rows = endpoints.map(
    (e) => html`<tr><td class="wrap mono">${e.url}</td><td class="wrap">${e.event_types.join(", ")}</td><td>${badge(e.status)}</td><td class="mono">${e.id}</td>
<td>${writable ? html`<div class="actions">${e.status === "enabled" ? action(e, "disable", "Disable") : action(e, "enable", "Enable")}${action(e, "rotate", "Rotate secret", "Replace this endpoint's signing secret?")}${action(e, "test", "Send test event")}${action(e, "delete", "Delete", "Delete this endpoint?", html``, "danger")}</div>` : ""}</td></tr>`,
  );
  const create = writable
    ? html`<h2>Add an endpoint</h2><form method="post" action="${BASE}/webhooks" class="card filters">${csrfField(session)}${idempotencyField()}
<label for="ep-url">URL<input id="ep-url" name="url" type="url" required placeholder="https://example.com/webhooks"></label>
<label for="ep-types">Events<select id="ep-types" name="event_types"><option value="*">all events</option>${EVENT_TYPES.map((t) => html`<option value="${t}">${t}</option>`)}</select></label>
<label for="ep-desc">Description<input id="ep-desc" name="description" maxlength="1000"></label><div class="actions"><button type="submit">Add endpoint</button></div></form>`
    : "";
  return html`${secret ?? ""}<p><a href="${BASE}/webhooks/deliveries">Deliveries</a> · <a href="${BASE}/webhooks/dead">Dead letter queue</a></p>
<div class="table-wrap"><table class="stack"><thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Id</th><th scope="col">Actions</th></tr></thead>
<tbody>${rows.length === 0 ? html`<tr><td colspan="5" class="muted">No endpoints yet.</td></tr>` : rows}</tbody></table></div>${create}`;
}

export function deliveriesPage(rows: readonly OwnedDeliveryRow[], hasMore: boolean, status: string): Html {
  const filter = html`<form method="get" action="${BASE}/webhooks/deliveries" class="card filters" aria-label="Filter deliveries"><label for="d-status">Status<select id="d-status" name="status"><option value="">any</option>${["pending", "succeeded", "dead"].map((s) => html`<option value="${s}"${s === status ? html` selected` : ""}>${s}</option>`)}</select></label><div class="actions"><button type="submit">Filter</button></div></form>`;
  const next = new URLSearchParams(status ? { status } : {});
  const last = rows.at(-1);
  if (last) next.set("starting_after", last.id);
  return html`${filter}<div class="table-wrap"><table><thead><tr><th scope="col">Delivery</th><th scope="col">Event</th><th scope="col">Endpoint</th><th scope="col">Status</th><th scope="col" class="num">Attempts</th><th scope="col">Created (UTC)</th></tr></thead><tbody>
${rows.length === 0 ? html`<tr><td colspan="6" class="muted">No deliveries.</td></tr>` : rows.map((d) => html`<tr><td class="mono">${d.id}</td><td>${d.type}${d.payment_id ? html` · <a href="${BASE}/payments/${d.payment_id}">payment</a>` : ""}</td><td class="wrap mono">${d.endpoint_url}</td><td>${badge(d.status)}</td><td class="num">${d.attempts}</td><td>${time(d.created_at)}</td></tr>`)}
</tbody></table></div><div class="pager">${hasMore ? html`<a rel="next" href="${BASE}/webhooks/deliveries?${next.toString()}">Next page</a>` : ""}</div>`;
}

/** One dead letter's row; while its replay is pending, it asks to be polled. */
export function deadLetterRow(session: DashboardSession, d: OwnedDeliveryRow, lastError: string | null): Html {
  const pending = d.status === "pending";
  const outcome =
    d.status === "succeeded" ? html`${badge("succeeded")} delivered` : pending ? html`${badge("pending")} replaying…` : html`${badge("dead")} ${lastError ?? ""}`;
  const replay =
    d.status === "dead" && session.actor.scopes.has("webhooks:write")
      ? html`<form method="post" action="${BASE}/webhooks/dead/${d.id}/replay" data-target="#dlq-${d.id}">${csrfField(session)}${idempotencyField()}<button type="submit" class="secondary" aria-label="Replay ${d.type} to ${d.endpoint_url}">Replay</button></form>`
      : "";
  return html`<tr id="dlq-${d.id}"${pending ? html` data-poll="${BASE}/webhooks/dead/${d.id}/row"` : ""}><td>${d.type}${d.payment_id ? html` · <a href="${BASE}/payments/${d.payment_id}">payment</a>` : ""}<div class="mono muted">${d.event_id}</div></td>
<td class="wrap mono">${d.endpoint_url}</td><td class="num">${d.attempts}</td><td class="wrap" aria-live="polite">${outcome}</td><td>${replay}</td></tr>`;
}

export function deadLetterTable(session: DashboardSession, rows: ReadonlyArray<{ row: OwnedDeliveryRow; lastError: string | null }>): Html {
  const all =
    rows.some((r) => r.row.status === "dead") && session.actor.scopes.has("webhooks:write")
      ? html`<form method="post" action="${BASE}/webhooks/dead/replay" data-target="#dlq" data-confirm="Replay every dead letter?">${csrfField(session)}${idempotencyField()}<button type="submit">Replay all</button></form>`
      : "";
  return html`<div id="dlq"><div class="actions spaced">${all}</div><div class="table-wrap"><table class="stack"><thead><tr><th scope="col">Event</th><th scope="col">Endpoint</th><th scope="col" class="num">Attempts</th><th scope="col">Outcome</th><th scope="col">Replay</th></tr></thead>
<tbody>${rows.length === 0 ? html`<tr><td colspan="5" class="muted">The dead letter queue is empty.</td></tr>` : rows.map((r) => deadLetterRow(session, r.row, r.lastError))}</tbody></table></div></div>`;
}
