import type { ConnectorAccount } from "../../accounts/connector-account";
import { CONNECTOR_IDS } from "../../connectors/registry";
import type { Routing } from "../../routing/routing";
import { html, type Html } from "../html";
import { badge, BASE, csrfField, idempotencyField } from "../layout";
import type { DashboardSession } from "../session";

/** Connector accounts (admin sessions: list, create, set or unset the default: the API wants the old one unset first) and the routing order (any session that may write it). */
export function accountsPage(session: DashboardSession, routing: Routing | undefined, accounts: readonly ConnectorAccount[] | undefined, chosen?: string): Html {
  const { actor } = session;
  const routingSection = routing
    ? html`<h2>Routing (${routing.mode})</h2><div class="card"><p>Connector priority: <b>${routing.connectors.length === 0 ? "default (by account)" : routing.connectors.join(" → ")}</b></p>
${actor.scopes.has("routing:write") ? html`<form method="post" action="${BASE}/accounts/routing" class="filters">${csrfField(session)}${idempotencyField()}<label for="r-order">Order (comma-separated: ${CONNECTOR_IDS.join(", ")})<input id="r-order" name="connectors" value="${routing.connectors.join(", ")}"></label><div class="actions"><button type="submit">Save routing</button></div></form>` : ""}</div>`
    : "";
  if (!accounts) return html`${routingSection}<p class="muted">Connector accounts are managed with an admin key.</p>`;
  const whose = chosen
    ? html`<p class="flash note" role="note">Connector accounts of <b>${chosen}</b>, the merchant chosen above. Routing is set with each merchant's own key (the API has no admin route for it); choose this key's merchant to see it.</p>`
    : "";
  const rows = accounts.map(
    (a) => html`<tr><td class="mono">${a.short_id}</td><td>${a.label}</td><td>${a.connector_id}</td><td>${a.mode}</td><td class="mono wrap">${a.credential_ref}</td><td>${a.is_default ? "yes" : "no"}</td><td>${badge(a.is_active ? "active" : "disabled")}</td>
<td><div class="actions"><a href="${BASE}/accounts/${a.short_id}">Edit</a>${a.is_active ? html`<form method="post" action="${BASE}/accounts/${a.short_id}/default" class="inline">${csrfField(session)}${idempotencyField()}<input type="hidden" name="is_default" value="${a.is_default ? "false" : "true"}"><button type="submit" class="secondary">${a.is_default ? "Unset default" : "Make default"}</button></form>` : ""}</div></td></tr>`,
  );
  return html`${whose}${routingSection}<h2>Connector accounts</h2><div class="table-wrap"><table><thead><tr><th scope="col">Id</th><th scope="col">Label</th><th scope="col">Connector</th><th scope="col">Mode</th><th scope="col">Credential ref</th><th scope="col">Default</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead>
<tbody>${rows.length === 0 ? html`<tr><td colspan="8" class="muted">No connector accounts.</td></tr>` : rows}</tbody></table></div>
<h2>Add a connector account</h2><form method="post" action="${BASE}/accounts" class="card filters">${csrfField(session)}${idempotencyField()}
<label for="a-connector">Connector<select id="a-connector" name="connector_id">${CONNECTOR_IDS.map((c) => html`<option value="${c}">${c}</option>`)}</select></label>
<label for="a-mode">Mode<select id="a-mode" name="mode"><option value="test">test</option><option value="live">live</option></select></label>
<label for="a-kind">Key kind<input id="a-kind" name="key_kind" required value="api_key"></label>
<label for="a-label">Label<input id="a-label" name="label" required maxlength="100"></label>
<label for="a-ref">Credential ref<input id="a-ref" name="credential_ref" required placeholder="env://NAME or secret://path"></label>
<label for="a-default" class="check"><input id="a-default" name="is_default" type="checkbox" value="true"> Default</label>
<div class="actions"><button type="submit">Add account</button></div></form>`;
}

/** An admin session's edit form for one account: its label and where its credential lives. */
export function accountEditPage(session: DashboardSession, a: ConnectorAccount): Html {
  return html`<p><a href="${BASE}/accounts">All accounts</a></p><form method="post" action="${BASE}/accounts/${a.short_id}" class="card filters">${csrfField(session)}${idempotencyField()}
<label for="e-label">Label<input id="e-label" name="label" required maxlength="100" value="${a.label}"></label>
<label for="e-ref">Credential ref<input id="e-ref" name="credential_ref" required value="${a.credential_ref}"></label>
<div class="actions"><button type="submit">Save account</button></div></form>
<div class="card"><dl class="facts"><dt>Connector</dt><dd>${a.connector_id}</dd><dt>Mode</dt><dd>${a.mode}</dd><dt>Key kind</dt><dd>${a.key_kind}</dd><dt>Default</dt><dd>${a.is_default ? "yes" : "no"}</dd><dt>Status</dt><dd>${badge(a.is_active ? "active" : "disabled")}</dd></dl></div>`;
}
