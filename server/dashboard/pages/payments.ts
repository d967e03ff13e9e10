import { eventsOfPayment } from "../../../store/dashboard-queries";
import type { AppContext } from "../../app-context";
import { toEvent } from "../../events/event";
import { PAYMENT_STATUSES, type Payment } from "../../payments/payment";
import { withDeliveries, type EventWithDeliveries } from "../../webhooks/events-api";
import type { ApiAnswer } from "../api";
import { html, type Html } from "../html";
import { badge, BASE, csrfField, idempotencyField, money, time } from "../layout";
import type { DashboardSession } from "../session";

/** The list's filters as the page's query names them; dates are whole UTC days. */
export const PAYMENT_FILTERS = ["status", "from", "to", "amount_gte", "amount_lte", "last4", "connector_account"] as const;

/** The dashboard's filters as the API's list query. */
export function paymentListQuery(query: URLSearchParams): Record<string, string | undefined> {
  const day = (name: string) => (/^\d{4}-\d{2}-\d{2}$/.test(query.get(name) ?? "") ? query.get(name) : undefined);
  const from = day("from");
  const to = day("to");
  return {
    limit: "25",
    status: query.get("status") || undefined,
    created_gte: from ? `${from}T00:00:00.000Z` : undefined,
    created_lte: to ? `${to}T23:59:59.999Z` : undefined,
    amount_gte: query.get("amount_gte") || undefined,
    amount_lte: query.get("amount_lte") || undefined,
    last4: query.get("last4") || undefined,
    connector_account: query.get("connector_account") || undefined,
    starting_after: query.get("starting_after") || undefined,
  };
}

export function paymentListPage(query: URLSearchParams, answer: ApiAnswer<{ data: Payment[]; has_more: boolean; error?: { message: string } }>): Html {
  const value = (name: string) => query.get(name) ?? "";
  const field = (name: string, label: string, attrs: Html) => html`<label for="f-${name}">${label}<input id="f-${name}" name="${name}" value="${value(name)}" ${attrs}></label>`;
  const filters = html`<form class="filters card" method="get" action="${BASE}/payments" aria-label="Filter payments">
<label for="f-status">Status<select id="f-status" name="status"><option value="">any</option>${PAYMENT_STATUSES.map((s) => html`<option value="${s}"${value("status") === s ? html` selected` : ""}>${s.replace(/_/g, " ")}</option>`)}</select></label>
${field("from", "From (UTC day)", html`type="date"`)}${field("to", "To (UTC day)", html`type="date"`)}
${field("amount_gte", "Amount from", html`type="number" min="0" inputmode="numeric" placeholder="minor units"`)}${field("amount_lte", "Amount to", html`type="number" min="0" inputmode="numeric" placeholder="minor units"`)}
${field("last4", "Card last 4", html`inputmode="numeric" pattern="[0-9]{4}" maxlength="4"`)}${field("connector_account", "Connector account", html`placeholder="ca_…"`)}
<div class="actions"><button type="submit">Filter</button><a href="${BASE}/payments">Clear</a></div></form>`;
  if (!answer.ok) return html`${filters}<div class="flash error" role="alert">${answer.body.error?.message ?? "The list could not be read."}</div>`;
  const rows = answer.body.data.map(
    (p) => html`<tr><td><a href="${BASE}/payments/${p.id}">${p.id}</a></td><td class="num">${money(p.amount, p.currency)}</td><td>${badge(p.status)}</td>
<td>${p.card.brand} •••• ${p.card.last4}</td><td class="mono">${p.connector_account_short_id}</td><td>${time(p.created_at)}</td></tr>`,
  );
  const last = answer.body.data.at(-1);
  const next = new URLSearchParams();
  for (const name of PAYMENT_FILTERS) if (value(name)) next.set(name, value(name));
  if (last) next.set("starting_after", last.id);
  return html`${filters}<div class="table-wrap"><table><caption class="muted">Newest first</caption>
<thead><tr><th scope="col">Payment</th><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Card</th><th scope="col">Account</th><th scope="col">Created (UTC)</th></tr></thead>
<tbody>${rows.length === 0 ? html`<tr><td colspan="6" class="muted">No payments match.</td></tr>` : rows}</tbody></table></div>
<div class="pager">${query.get("starting_after") ? html`<a href="${BASE}/payments">First page</a>` : ""}${answer.body.has_more ? html`<a href="${BASE}/payments?${next.toString()}" rel="next">Next page</a>` : ""}</div>`;
}

/** The payment's events with their deliveries (when the key may read webhooks), oldest first. */
export async function paymentTimeline(app: AppContext, session: DashboardSession, paymentId: string): Promise<EventWithDeliveries[]> {
  const events = await eventsOfPayment(app.db, session.actor, paymentId);
  if (!session.actor.scopes.has("webhooks:read")) return events.map((e) => ({ ...toEvent(e), deliveries: [] }));
  return Promise.all(events.map((e) => withDeliveries(app.db, e)));
}

function actionForms(session: DashboardSession, p: Payment): Html {
  if (!session.actor.scopes.has("payments:write")) return html`<p class="muted">This key cannot change payments.</p>`;
  const form = (operation: string, question: string, body: Html, label: string, cls = "") =>
    html`<form method="post" action="${BASE}/payments/${p.id}/${operation}" data-confirm="${question}">${csrfField(session)}${idempotencyField()}${body}<button type="submit" class="${cls}">${label}</button></form>`;
  const refundable = p.amount_captured - p.amount_refunded;
  const forms: Html[] = [];
  if (p.status === "authorized") {
    forms.push(form("capture", `Capture ${money(p.amount, p.currency)}?`, html``, "Capture"));
    forms.push(form("void", "Void this authorization?", html``, "Void", "danger"));
  }
  if ((p.status === "succeeded" || p.status === "partially_refunded") && refundable > 0) {
    forms.push(
      form(
        "refund",
        "Refund this payment?",
        html`<label for="refund-amount">Refund amount (${p.currency.toUpperCase()}, up to ${money(refundable, p.currency)})<input id="refund-amount" name="amount" inputmode="decimal" required placeholder="${money(refundable, p.currency).split(" ")[0]}"></label>
<label for="refund-reason">Reason (optional)<input id="refund-reason" name="reason" maxlength="500"></label>`,
        "Refund",
      ),
    );
  }
  return forms.length === 0 ? html`<p class="muted">No action applies to a payment in status ${p.status}.</p>` : html`<div class="actions">${forms}</div>`;
}

export function paymentDetailPage(session: DashboardSession, p: Payment, timeline: readonly EventWithDeliveries[]): Html {
  const refunds = p.refunds.map((r) => html`<tr><td class="mono">${r.id}</td><td class="num">${money(r.amount, p.currency)}</td><td class="wrap">${r.reason ?? ""}</td><td>${time(r.created_at)}</td></tr>`);
  const events = timeline.map(
    (e) => html`<li><b>${e.type}</b> ${time(e.created_at)} <span class="mono muted">${e.id}</span>${e.deliveries.map(
      (d) => html`<div class="muted">Delivery <span class="mono">${d.id}</span> to <span class="mono">${d.endpoint_id}</span>: ${badge(d.status)}
<ul>${d.attempts_log.map((a) => html`<li>${time(a.attempted_at)} → ${a.status_code ?? a.error ?? "no answer"} in ${Math.round(a.duration_ms)} ms${a.response_excerpt ? html` <code>${a.response_excerpt.slice(0, 120)}</code>` : ""}</li>`)}</ul></div>`,
    )}</li>`,
  );
  return html`<div class="card"><dl class="facts">
<dt>Amount</dt><dd>${money(p.amount, p.currency)}</dd>
<dt>Captured</dt><dd>${money(p.amount_captured, p.currency)}</dd>
<dt>Refunded</dt><dd>${money(p.amount_refunded, p.currency)}</dd>
<dt>Status</dt><dd>${badge(p.status)}</dd>
<dt>Card</dt><dd>${p.card.brand} •••• ${p.card.last4} (exp ${String(p.card.exp_month).padStart(2, "0")}/${p.card.exp_year})</dd>
<dt>Connector</dt><dd>${p.connector_id} · <span class="mono">${p.connector_account_short_id}</span></dd>
<dt>Processor reference</dt><dd class="mono">${p.connector_transaction_id ?? "—"}</dd>
${p.failure_code ? html`<dt>Failure</dt><dd>${p.failure_code}: ${p.failure_message ?? ""}</dd>` : ""}
${p.description ? html`<dt>Description</dt><dd>${p.description}</dd>` : ""}
<dt>Created</dt><dd>${time(p.created_at)}</dd></dl></div>
<h2>Actions</h2>${actionForms(session, p)}
<h2>Refunds</h2><div class="table-wrap"><table><thead><tr><th scope="col">Refund</th><th scope="col" class="num">Amount</th><th scope="col">Reason</th><th scope="col">Created (UTC)</th></tr></thead>
<tbody>${refunds.length === 0 ? html`<tr><td colspan="4" class="muted">No refunds.</td></tr>` : refunds}</tbody></table></div>
<h2>Timeline</h2><div class="card"><ol class="timeline" aria-label="Events">${events.length === 0 ? html`<li class="muted">No events.</li>` : events}</ol></div>`;
}
