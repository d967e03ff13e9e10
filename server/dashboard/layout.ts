import { randomUUID } from "node:crypto";
import type { Merchant } from "../merchants/merchants";
import { toDecimalString } from "../payments/currency";
import { html, type Html } from "./html";
import type { DashboardSession } from "./session";

export const BASE = "/dashboard";

export interface Flash {
  kind: "ok" | "error";
  text: string;
}

export const NAV: Array<[string, string]> = [
  ["Overview", BASE],
  ["Payments", `${BASE}/payments`],
  ["Webhooks", `${BASE}/webhooks`],
  ["Dead letters", `${BASE}/webhooks/dead`],
  ["API keys", `${BASE}/keys`],
  ["Accounts & routing", `${BASE}/accounts`],
];

function document(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · paygate</title><link rel="stylesheet" href="${BASE}/assets/dashboard.css"><link rel="icon" href="data:,">
<script src="${BASE}/assets/dashboard.js" defer></script></head>
<body>${body}</body></html>`;
}

/** An admin session's merchant switcher: the merchants the admin API lists, and the one its admin pages act on. */
export interface MerchantChoice {
  merchants: readonly Merchant[];
  chosen: Merchant;
}

/** Pages whose data the admin API gives for any merchant; the others show the admin key's own. */
const FOLLOWS_CHOICE = new Set([`${BASE}/accounts`]);

function switcher(session: DashboardSession, current: string, choice: MerchantChoice): Html {
  const options = choice.merchants.map((m) => html`<option value="${m.id}"${m.id === choice.chosen.id ? " selected" : ""}>${m.short_id} · ${m.name}${m.id === session.actor.merchantId ? " (this key's)" : ""}</option>`);
  return html`<form method="post" action="${BASE}/merchant" class="inline switcher">${csrfField(session)}<input type="hidden" name="back" value="${current}">
<label for="merchant-switch">Merchant<select id="merchant-switch" name="merchant_id">${options}</select></label><button type="submit" class="secondary">Switch</button></form>`;
}

/** Said on a page the admin API covers for no other merchant, while another is chosen. */
function ownMerchantNote(session: DashboardSession, current: string, choice: MerchantChoice | undefined): Html {
  if (!choice || choice.chosen.id === session.actor.merchantId || FOLLOWS_CHOICE.has(current)) return html``;
  return html`<p class="flash note" role="note">This page shows the admin key's own merchant, <b>${session.actor.merchantShortId}</b>: the API gives an admin key no route to another merchant's ${current === `${BASE}/keys` ? "key list" : "payments and webhooks"}. The chosen merchant, ${choice.chosen.short_id} (${choice.chosen.name}), applies to Accounts & routing${current === `${BASE}/keys` ? " and to the key form below" : ""}.</p>`;
}

/** A signed-in page: navigation, who is signed in (with an admin's merchant switcher), the flash line, then `content`. */
export function page(title: string, session: DashboardSession, current: string, content: Html, flash?: Flash, choice?: MerchantChoice): Html {
  const { actor } = session;
  const nav = NAV.map(([label, href]) => html`<a href="${href}"${href === current ? html` aria-current="page"` : ""}>${label}</a>`);
  return document(
    title,
    html`<a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="${BASE}">paygate</a><nav aria-label="Main">${nav}</nav>
<div class="who"><span>${actor.merchantShortId} · ${actor.mode}${actor.role === "admin" ? " · admin" : ""}</span>${choice ? switcher(session, current, choice) : ""}
<form method="post" action="${BASE}/sign-out" class="inline">${csrfField(session)}<button type="submit">Sign out</button></form></div></header>
<main id="main"><div id="live" role="status" aria-live="polite" class="muted"></div>${flash ? html`<div class="flash ${flash.kind}" role="alert">${flash.text}</div>` : ""}
<h1>${title}</h1>${ownMerchantNote(session, current, choice)}${content}</main>`,
  );
}

export function signInPage(error?: string): Html {
  return document(
    "Sign in",
    html`<main id="main" class="signin"><div class="card"><h1>Sign in to paygate</h1>
${error ? html`<div class="flash error" role="alert">${error}</div>` : ""}
<form method="post" action="${BASE}/sign-in">
<label for="api_key">Secret API key<input id="api_key" name="api_key" type="password" autocomplete="off" required placeholder="sk_test_…"></label>
<button type="submit">Sign in</button></form>
<p class="muted">A merchant key shows that merchant in its mode; the key is exchanged for a session and never kept.</p></div></main>`,
  );
}

export function errorPage(status: number, message: string): Html {
  return document("Error", html`<main id="main" class="signin"><div class="card"><h1>${status === 404 ? "Not found" : "Something went wrong"}</h1><p>${message}</p><p><a href="${BASE}">Back to the dashboard</a></p></div></main>`);
}

export const csrfField = (session: DashboardSession): Html => html`<input type="hidden" name="csrf" value="${session.csrfToken}">`;

/** A fresh Idempotency-Key per drawn form: sending the same form twice is one request. */
export const idempotencyField = (): Html => html`<input type="hidden" name="idempotency_key" value="dash_${randomUUID()}">`;

/** `amount` in minor units as the currency writes it. */
export const money = (amount: number, currency: string): string => `${toDecimalString(amount, currency)} ${currency.toUpperCase()}`;

export const badge = (status: string): Html => html`<span class="badge ${status}">${status.replace(/_/g, " ")}</span>`;

/** An ISO time as a short UTC string, with the full value as `datetime`. */
export const time = (iso: string | null | undefined): Html =>
  iso ? html`<time datetime="${iso}">${iso.slice(0, 19).replace("T", " ")}</time>` : html`<span class="muted">—</span>`;
