import type { ApiKey } from "../../keys/api-key";
import type { Merchant } from "../../merchants/merchants";
import { html, type Html } from "../html";
import { badge, BASE, csrfField, idempotencyField, time } from "../layout";
import type { DashboardSession } from "../session";

export function keysPage(session: DashboardSession, keys: readonly ApiKey[], secret?: Html): Html {
  const writable = session.actor.scopes.has("keys:write");
  const act = (k: ApiKey, name: string, label: string, question: string, cls: string) =>
    html`<form method="post" action="${BASE}/keys/${k.id}/${name}" class="inline" data-confirm="${question}">${csrfField(session)}${idempotencyField()}<button type="submit" class="${cls}">${label}</button></form>`;
  const rows = keys.map(
    (k) => html`<tr><td>${k.name}${k.id === session.actor.apiKeyId ? html` <span class="muted">(this session)</span>` : ""}</td><td class="mono">${k.key_prefix}…${k.last4}</td><td>${k.type}${k.role === "admin" ? " · admin" : ""}</td>
<td class="wrap">${k.scopes.join(", ")}</td><td>${badge(k.status)}</td><td>${time(k.last_used_at)}</td>
<td>${writable && k.status === "active" ? html`<div class="actions">${act(k, "rotate", "Rotate", "Replace this key? The old one stops working.", "secondary")}${act(k, "revoke", "Revoke", "Revoke this key for good?", "danger")}</div>` : ""}</td></tr>`,
  );
  const create = writable
    ? html`<h2>Create a key</h2><form method="post" action="${BASE}/keys" class="card filters">${csrfField(session)}${idempotencyField()}
<label for="k-name">Name<input id="k-name" name="name" required maxlength="100"></label>
<label for="k-type">Type<select id="k-type" name="type"><option value="secret">secret</option><option value="publishable">publishable</option></select></label>
<div class="actions"><button type="submit">Create key</button></div></form>`
    : "";
  return html`${secret ?? ""}<div class="table-wrap"><table class="stack"><thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Type</th><th scope="col">Scopes</th><th scope="col">Status</th><th scope="col">Last used (UTC)</th><th scope="col">Actions</th></tr></thead>
<tbody>${rows.length === 0 ? html`<tr><td colspan="7" class="muted">No keys this session may manage.</td></tr>` : rows}</tbody></table></div>${create}`;
}

/** An admin session's form for a key of the merchant it chose: the admin API creates one, it lists none. */
export function chosenMerchantKeyForm(session: DashboardSession, merchant: Merchant): Html {
  return html`<h2>Create a key for ${merchant.short_id} (${merchant.name})</h2><form method="post" action="${BASE}/keys/chosen" class="card filters">${csrfField(session)}${idempotencyField()}
<label for="c-name">Name<input id="c-name" name="name" required maxlength="100"></label>
<label for="c-type">Type<select id="c-type" name="type"><option value="secret">secret</option><option value="publishable">publishable</option></select></label>
<div class="actions"><button type="submit">Create key for ${merchant.short_id}</button></div></form>`;
}
