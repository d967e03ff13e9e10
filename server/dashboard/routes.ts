import { getRouterParams, HTTPResponse, type H3, type H3Event } from "h3";
import { attemptsOf } from "../../store/webhooks";
import { findOwnedDelivery, listOwnedDeliveries, type OwnedDeliveryRow } from "../../store/dashboard-queries";
import type { AppContext } from "../app-context";
import { devHostRefusal } from "../dev-mode";
import { ApiError } from "../errors";
import { readingPayments } from "../events/routes";
import { clientAddress } from "../http/client-address";
import { asApiError, logRequest } from "../http/pipeline";
import { refuseNul } from "../http/refuse-nul";
import { requestIdFor } from "../http/request-id";
import type { Route } from "../http/route";
import { requireScope } from "../keys/authenticator";
import type { Actor } from "../keys/actor";
import type { Merchant } from "../merchants/merchants";
import { currencyExponent, parseDecimalAmount, toDecimalString } from "../payments/currency";
import type { Payment } from "../payments/payment";
import { ApiClient, errorMessage, type ApiAnswer } from "./api";
import { ASSETS } from "./assets";
import { html, type Html } from "./html";
import { BASE, errorPage, NAV, page, signInPage, type Flash, type MerchantChoice } from "./layout";
import { accountEditPage, accountsPage } from "./pages/accounts";
import { chosenMerchantKeyForm, keysPage } from "./pages/keys";
import { overviewPage } from "./pages/overview";
import { paymentDetailPage, paymentListPage, paymentListQuery, paymentTimeline } from "./pages/payments";
import { deadLetterRow, deadLetterTable, deliveriesPage, endpointsPage, secretBox } from "./pages/webhooks";
import { csrfMatches, endSession, loadSession, openSession, redeemSignInToken, setChosenMerchant, type DashboardSession } from "./session";

const COOKIE = "paygate_session";
const MAX_FORM_BYTES = 16 * 1024;
const DEAD_LETTER_PAGE = 100;

/**
 * Sent on every dashboard answer: no script but the dashboard's own file, no framing,
 * nothing cached, no referrer to other sites (a sign-in link's token stays out of their logs;
 * same-origin requests keep it, so a form POST carries its Origin).
 */
const SECURITY_HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store",
} as const;

/** Messages shown after a redirect, by a fixed code: nothing from the URL is echoed. */
const DONE: Record<string, string> = {
  captured: "Payment captured.",
  refunded: "Refund sent.",
  voided: "Payment voided.",
  disabled: "Endpoint disabled.",
  enabled: "Endpoint enabled.",
  deleted: "Endpoint deleted.",
  tested: "Test event sent.",
  revoked: "Key revoked.",
  routing: "Routing saved.",
  default: "Default account changed.",
  saved: "Account saved.",
};

interface DashRequest {
  event: H3Event;
  requestId: string;
  params: Record<string, string>;
  form: URLSearchParams;
  session: DashboardSession;
  /** Whether the client script asked for the fragment alone. */
  fragment: boolean;
}

/** A request before any sign-in check: the session, if the cookie names a live one. */
type PublicRequest = Omit<DashRequest, "session"> & { session: DashboardSession | undefined };

type Answer = HTTPResponse;

function answer(status: number, body: Html | string, headers: Record<string, string> = {}): Answer {
  return new HTTPResponse(String(body), { status, headers: { "content-type": "text/html; charset=utf-8", ...SECURITY_HEADERS, ...headers } });
}

const redirect = (location: string, headers: Record<string, string> = {}): Answer =>
  new HTTPResponse(null, { status: 303, headers: { location, ...SECURITY_HEADERS, ...headers } });

const flashOf = (query: URLSearchParams): Flash | undefined => {
  const text = DONE[query.get("done") ?? ""];
  return text ? { kind: "ok", text } : undefined;
};

/** What the refund form says when an amount is not one the currency can have (one rule for all: currency.ts `parseDecimalAmount`). */
function amountHint(currency: string): string {
  const exponent = currencyExponent(currency);
  const decimals = exponent === 0 ? "no decimals" : `at most ${exponent} decimal${exponent === 1 ? "" : "s"}`;
  return `Enter the refund amount as a number with ${decimals} (${currency.toUpperCase()}), such as ${toDecimalString(5 * 10 ** exponent, currency)}.`;
}

function cookieOf(event: H3Event): string | undefined {
  for (const part of (event.req.headers.get("cookie") ?? "").split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === COOKIE) return value.join("=");
  }
  return undefined;
}

async function readForm(event: H3Event): Promise<URLSearchParams> {
  const text = await event.req.text();
  if (Buffer.byteLength(text) > MAX_FORM_BYTES) throw new ApiError(413, "payload_too_large", "The form is too large.");
  return new URLSearchParams(text);
}

/** A cross-site POST is refused even before the CSRF token is looked at. */
function sameOrigin(event: H3Event, scheme: string): boolean {
  const origin = event.req.headers.get("origin");
  return origin === null || origin === `${scheme}://${event.req.headers.get("host") ?? ""}`;
}

/** Serves the dashboard under `/dashboard` on the API's h3 app, acting through the API's own routes. */
export function mountDashboard(h3: H3, app: AppContext, routes: readonly Route[]): void {
  const api = new ApiClient(app, routes);
  const schemeOf = (event: H3Event) => clientAddress(event, app.config.trustProxy, app.config.tls ? "https" : "http").scheme;
  const cookie = (event: H3Event, value: string, maxAge?: number) =>
    `${COOKIE}=${value}; Path=${BASE}; HttpOnly; SameSite=Strict${schemeOf(event) === "https" ? "; Secure" : ""}${maxAge === undefined ? "" : `; Max-Age=${maxAge}`}`;

  /**
   * Every dashboard answer leaves through here: a POST from another origin is refused,
   * the request is logged like an API request, and errors become an HTML page with the
   * API's status and message.
   */
  const handle =
    (path: string, handler: (req: PublicRequest) => Promise<Answer>) =>
    async (event: H3Event): Promise<Answer> => {
      const started = performance.now();
      const requestId = requestIdFor(event.req.headers.get("x-request-id"));
      let result: Answer;
      let merchant: string | undefined;
      try {
        if (app.config.devMode) {
          const refusal = devHostRefusal(event.req.headers);
          if (refusal) throw refusal;
        }
        const post = event.req.method === "POST";
        if (post && !sameOrigin(event, schemeOf(event))) throw new ApiError(403, "csrf_rejected", "This form was sent from another site.");
        const form = post ? await readForm(event) : new URLSearchParams();
        const params = (getRouterParams(event, { decode: true }) ?? {}) as Record<string, string>;
        refuseNul({ params, query: event.url.searchParams, form });
        const session = await loadSession(app, cookieOf(event));
        merchant = session?.actor.merchantShortId;
        result = await handler({ event, requestId, params, form, session, fragment: event.req.headers.get("x-dashboard-fragment") === "1" });
      } catch (error) {
        const apiError = asApiError(app, error, requestId);
        result = answer(apiError.status, errorPage(apiError.status, apiError.message));
      }
      logRequest(app, event, path, requestId, result.status ?? 200, started, merchant);
      return result;
    };
  /** A page behind sign-in: a live session (its key re-read) and, on POST, the session's CSRF token. */
  const signedIn =
    (handler: (req: DashRequest) => Promise<Answer>) =>
    async (req: PublicRequest): Promise<Answer> => {
      const post = req.event.req.method === "POST";
      if (!req.session) return post || req.fragment ? answer(401, signInPage("Your session has ended. Sign in again.")) : redirect(`${BASE}/sign-in`);
      if (post && !csrfMatches(req.session, req.form.get("csrf"))) {
        return answer(403, errorPage(403, "This form is out of date (CSRF token missing or wrong). Reload the page and try again."));
      }
      return handler({ ...req, session: req.session });
    };
  const get = (path: string, handler: (req: DashRequest) => Promise<Answer>) => h3.get(path, handle(path, signedIn(handler)));
  const post = (path: string, handler: (req: DashRequest) => Promise<Answer>) => h3.post(path, handle(path, signedIn(handler)));
  const call = <T = any>(req: DashRequest, method: Route["method"], pattern: string, options: Omit<Parameters<ApiClient["call"]>[3], "requestId"> = {}) =>
    api.call<T>(req.session.actor, method, pattern, { ...options, requestId: req.requestId });
  /** The merchant an admin session's admin pages act on: the one it chose, else its key's own. */
  const target = (req: DashRequest) => req.session.chosenMerchantId ?? req.session.actor.merchantId;
  /** An admin session's switcher, from the admin API's merchant list; none for a key the API refuses it to. */
  const merchantChoice = async (req: DashRequest): Promise<MerchantChoice | undefined> => {
    if (!req.session.actor.scopes.has("admin")) return undefined;
    const list = await call<{ data: Merchant[] }>(req, "GET", "/admin/merchants", { query: { limit: "100" } });
    if (!list.ok) return undefined;
    const listed = list.body.data.find((m) => m.id === target(req));
    if (listed) return { merchants: list.body.data, chosen: listed };
    const one = await call<Merchant>(req, "GET", "/admin/merchants/:merchantId", { params: { merchantId: target(req) } });
    return one.ok ? { merchants: [one.body, ...list.body.data], chosen: one.body } : undefined;
  };
  const show = async (req: DashRequest, title: string, current: string, content: Html, flash?: Flash, status = 200) =>
    answer(status, page(title, req.session, current, content, flash, await merchantChoice(req)));
  const formKey = (req: DashRequest) => req.form.get("idempotency_key") ?? undefined;
  /** An API refusal shown as the page it came from would show it: its status and message. */
  const failed = (req: DashRequest, title: string, current: string, result: ApiAnswer) =>
    show(req, title, current, html`<p><a href="${current}">Back</a></p>`, { kind: "error", text: errorMessage(result) }, result.status);

  for (const [name, asset] of Object.entries(ASSETS)) {
    h3.get(`${BASE}/assets/${name}`, () => new HTTPResponse(asset.body, { headers: { ...SECURITY_HEADERS, "content-type": asset.type, "cache-control": "private, max-age=300" } }));
  }

  h3.get(`${BASE}/sign-in`, handle(`${BASE}/sign-in`, async (req) => (req.session ? redirect(BASE) : answer(200, signInPage()))));
  h3.post(
    `${BASE}/sign-in`,
    handle(`${BASE}/sign-in`, async (req) => {
      let actor: Actor;
      try {
        actor = await app.auth.authenticate(`Bearer ${(req.form.get("api_key") ?? "").trim()}`);
      } catch (error) {
        if (error instanceof ApiError) return answer(401, signInPage("That API key is not valid."));
        throw error;
      }
      if (actor.keyType !== "secret") return answer(403, signInPage("Sign in with a secret key (sk_…); publishable keys cannot."));
      if (req.session) await endSession(app, req.session);
      return redirect(BASE, { "set-cookie": cookie(req.event, await openSession(app, actor)) });
    }),
  );
  h3.get(
    `${BASE}/sign-in/link`,
    handle(`${BASE}/sign-in/link`, async (req) => {
      const actor = await redeemSignInToken(app, req.event.url.searchParams.get("token") ?? "");
      if (!actor) return answer(401, signInPage("This sign-in link was used already or has expired. Sign in with your key."));
      if (req.session) await endSession(app, req.session);
      return redirect(BASE, { "set-cookie": cookie(req.event, await openSession(app, actor)) });
    }),
  );
  post(`${BASE}/sign-out`, async (req) => {
    await endSession(app, req.session);
    return redirect(`${BASE}/sign-in`, { "set-cookie": cookie(req.event, "", 0) });
  });

  // The switcher: the merchant must be one the admin API answers for this key (a merchant key gets its 403).
  const SWITCH_BACK = new Set(NAV.map(([, href]) => href));
  post(`${BASE}/merchant`, async (req) => {
    const found = await call<Merchant>(req, "GET", "/admin/merchants/:merchantId", { params: { merchantId: (req.form.get("merchant_id") ?? "").trim() } });
    if (!found.ok) return failed(req, "Merchant", BASE, found);
    await setChosenMerchant(app, req.session, found.body.id === req.session.actor.merchantId ? null : found.body.id);
    const back = req.form.get("back") ?? "";
    return redirect(SWITCH_BACK.has(back) ? back : BASE);
  });

  get(BASE, async (req) => show(req, "Overview", BASE, await overviewPage(app, req.session)));

  // Payments: every read and write is the API route itself, run with the session's key.
  get(`${BASE}/payments`, async (req) => {
    const query = req.event.url.searchParams;
    const list = await call(req, "GET", "/v1/payments", { query: paymentListQuery(query) });
    return show(req, "Payments", `${BASE}/payments`, paymentListPage(query, list), undefined, list.ok ? 200 : list.status);
  });
  const paymentPage = async (req: DashRequest, id: string, flash?: Flash, status = 200) => {
    const found = await call<Payment>(req, "GET", "/v1/payments/:id", { params: { id } });
    if (!found.ok) return answer(found.status, errorPage(found.status, errorMessage(found)));
    return show(req, `Payment ${found.body.id}`, `${BASE}/payments`, paymentDetailPage(req.session, found.body, await paymentTimeline(app, req.session, found.body.id)), flash, status);
  };
  get(`${BASE}/payments/:id`, async (req) => paymentPage(req, req.params.id as string, flashOf(req.event.url.searchParams)));
  const PAST = { capture: "captured", refund: "refunded", void: "voided" } as const;
  post(`${BASE}/payments/:id/:operation`, async (req) => {
    const id = req.params.id as string;
    const operation = req.params.operation as string;
    if (!(operation in PAST)) throw new ApiError(404, "resource_not_found", "No such action.");
    const body: Record<string, unknown> = { payment_id: id };
    if (operation === "refund") {
      const found = await call<Payment>(req, "GET", "/v1/payments/:id", { params: { id } });
      if (!found.ok) return answer(found.status, errorPage(found.status, errorMessage(found)));
      const amount = (req.form.get("amount") ?? "").trim();
      if (amount !== "") {
        const minor = parseDecimalAmount(amount, found.body.currency);
        if (minor === undefined) return paymentPage(req, id, { kind: "error", text: amountHint(found.body.currency) }, 400);
        body.amount = minor;
      }
      const reason = (req.form.get("reason") ?? "").trim();
      if (reason) body.reason = reason;
    }
    const result = await call(req, "POST", `/v1/payments/${operation}`, { body, idempotencyKey: formKey(req) });
    if (!result.ok) return paymentPage(req, id, { kind: "error", text: errorMessage(result) }, result.status);
    return redirect(`${BASE}/payments/${encodeURIComponent(id)}?done=${PAST[operation as keyof typeof PAST]}`);
  });

  // Webhook endpoints.
  const endpointsView = async (req: DashRequest, secret?: Html, flash?: Flash, status = 200) => {
    const list = await call(req, "GET", "/v1/webhook_endpoints", { query: { limit: "100" } });
    if (!list.ok) return failed(req, "Webhooks", `${BASE}/webhooks`, list);
    return show(req, "Webhooks", `${BASE}/webhooks`, endpointsPage(req.session, list.body.data, secret), flash, status);
  };
  get(`${BASE}/webhooks`, async (req) => endpointsView(req, undefined, flashOf(req.event.url.searchParams)));
  post(`${BASE}/webhooks`, async (req) => {
    const type = req.form.get("event_types") ?? "*";
    const description = (req.form.get("description") ?? "").trim();
    const result = await call(req, "POST", "/v1/webhook_endpoints", {
      body: { url: (req.form.get("url") ?? "").trim(), event_types: [type], ...(description && { description }) },
      idempotencyKey: formKey(req),
    });
    if (!result.ok) return endpointsView(req, undefined, { kind: "error", text: errorMessage(result) }, result.status);
    return endpointsView(req, secretBox(`Signing secret of ${result.body.url}`, result.body.secret), { kind: "ok", text: "Endpoint added." });
  });
  post(`${BASE}/webhooks/:id/:action`, async (req) => {
    const params = { id: req.params.id as string };
    const key = formKey(req);
    const action = req.params.action;
    let result: ApiAnswer;
    if (action === "enable" || action === "disable") result = await call(req, "PATCH", "/v1/webhook_endpoints/:id", { params, body: { status: `${action}d` }, idempotencyKey: key });
    else if (action === "delete") result = await call(req, "DELETE", "/v1/webhook_endpoints/:id", { params, idempotencyKey: key });
    else if (action === "test") result = await call(req, "POST", "/v1/webhook_endpoints/:id/test", { params, body: {}, idempotencyKey: key });
    else if (action === "rotate") {
      result = await call(req, "POST", "/v1/webhook_endpoints/:id/rotate_secret", { params, body: {}, idempotencyKey: key });
      if (result.ok) return endpointsView(req, secretBox(`New signing secret of ${result.body.url}`, result.body.secret), { kind: "ok", text: "Secret rotated; the old one stays valid for a grace period." });
    } else throw new ApiError(404, "resource_not_found", "No such action.");
    if (!result.ok) return endpointsView(req, undefined, { kind: "error", text: errorMessage(result) }, result.status);
    if (action === "test") {
      const outcome = result.body as { delivered?: boolean; status_code?: number | null; error?: string | null };
      return endpointsView(req, undefined, { kind: outcome.delivered ? "ok" : "error", text: `Test event ${outcome.delivered ? "delivered" : "not delivered"}: ${outcome.status_code ?? outcome.error ?? "no answer"}.` });
    }
    return redirect(`${BASE}/webhooks?done=${action}d`);
  });

  // Deliveries and the dead letter queue: owned through the event, read under the events' rule.
  const owner = (req: DashRequest) => {
    requireScope(req.session.actor, "webhooks:read");
    return readingPayments(req.session.actor);
  };
  get(`${BASE}/webhooks/deliveries`, async (req) => {
    const actor = owner(req);
    const query = req.event.url.searchParams;
    const status = ["pending", "succeeded", "dead"].find((s) => s === query.get("status")) as OwnedDeliveryRow["status"] | undefined;
    const afterId = query.get("starting_after");
    const after = afterId ? await findOwnedDelivery(app.db, actor, afterId) : undefined;
    const rows = await listOwnedDeliveries(app.db, actor, { status, limit: 25, after });
    return show(req, "Webhook deliveries", `${BASE}/webhooks`, deliveriesPage(rows.slice(0, 25), rows.length > 25, status ?? ""));
  });
  const withLastError = async (rows: readonly OwnedDeliveryRow[]) => {
    const attempts = await attemptsOf(app.db, rows.map((r) => r.id));
    return rows.map((row) => {
      const last = attempts.filter((a) => a.delivery_id === row.id).at(-1);
      return { row, lastError: last ? (last.status_code === null ? last.error : `HTTP ${last.status_code}`) : null };
    });
  };
  const deadLetters = async (req: DashRequest) => withLastError((await listOwnedDeliveries(app.db, owner(req), { status: "dead", limit: DEAD_LETTER_PAGE })).slice(0, DEAD_LETTER_PAGE));
  get(`${BASE}/webhooks/dead`, async (req) => show(req, "Dead letter queue", `${BASE}/webhooks/dead`, deadLetterTable(req.session, await deadLetters(req))));
  const deliveryRow = async (req: DashRequest, id: string) => {
    const row = await findOwnedDelivery(app.db, owner(req), id);
    if (!row) throw new ApiError(404, "resource_not_found", `No delivery ${id}.`);
    const [withError] = await withLastError([row]);
    return withError as { row: OwnedDeliveryRow; lastError: string | null };
  };
  /** Replays one dead delivery to its endpoint through the API's replay route; the key is the form's, per delivery. */
  const replay = (req: DashRequest, row: OwnedDeliveryRow, key: string | undefined) =>
    call(req, "POST", "/v1/events/:id/replay", { params: { id: row.event_id }, body: { endpoint: row.endpoint_id }, idempotencyKey: key && `${key}:${row.id}` });
  get(`${BASE}/webhooks/dead/:id/row`, async (req) => {
    const { row, lastError } = await deliveryRow(req, req.params.id as string);
    return answer(200, deadLetterRow(req.session, row, lastError));
  });
  post(`${BASE}/webhooks/dead/:id/replay`, async (req) => {
    const { row } = await deliveryRow(req, req.params.id as string);
    const result = await replay(req, row, formKey(req));
    if (!result.ok) return req.fragment ? answer(result.status, html`<tr id="dlq-${row.id}"><td colspan="5" role="alert">${errorMessage(result)}</td></tr>`) : failed(req, "Dead letter queue", `${BASE}/webhooks/dead`, result);
    const fresh = await deliveryRow(req, row.id);
    return req.fragment ? answer(200, deadLetterRow(req.session, fresh.row, fresh.lastError)) : redirect(`${BASE}/webhooks/dead`);
  });
  post(`${BASE}/webhooks/dead/replay`, async (req) => {
    const dead = await deadLetters(req);
    const replayed = new Set<string>();
    for (const { row } of dead) {
      const result = await replay(req, row, formKey(req));
      if (!result.ok) return failed(req, "Dead letter queue", `${BASE}/webhooks/dead`, result);
      replayed.add(row.id);
    }
    const fresh = await withLastError((await Promise.all([...replayed].map((id) => findOwnedDelivery(app.db, owner(req), id)))).filter((r): r is OwnedDeliveryRow => r !== undefined));
    return req.fragment ? answer(200, deadLetterTable(req.session, fresh)) : redirect(`${BASE}/webhooks/dead`);
  });

  // API keys, under the API's key management rule.
  const keysView = async (req: DashRequest, secret?: Html, flash?: Flash, status = 200) => {
    const list = await call(req, "GET", "/v1/api-keys", { query: { limit: "100" } });
    if (!list.ok) return failed(req, "API keys", `${BASE}/keys`, list);
    const forChosen = req.session.chosenMerchantId ? await call<Merchant>(req, "GET", "/admin/merchants/:merchantId", { params: { merchantId: req.session.chosenMerchantId } }) : undefined;
    const chosenForm = forChosen?.ok ? chosenMerchantKeyForm(req.session, forChosen.body) : "";
    return show(req, "API keys", `${BASE}/keys`, html`${keysPage(req.session, list.body.data, secret)}${chosenForm}`, flash, status);
  };
  get(`${BASE}/keys`, async (req) => keysView(req, undefined, flashOf(req.event.url.searchParams)));
  post(`${BASE}/keys`, async (req) => {
    const result = await call(req, "POST", "/v1/api-keys", { body: { name: (req.form.get("name") ?? "").trim(), type: req.form.get("type") ?? "secret" }, idempotencyKey: formKey(req) });
    if (!result.ok) return keysView(req, undefined, { kind: "error", text: errorMessage(result) }, result.status);
    return keysView(req, secretBox(`New key ${result.body.name}`, result.body.key), { kind: "ok", text: "Key created." });
  });
  post(`${BASE}/keys/chosen`, async (req) => {
    const result = await call(req, "POST", "/admin/merchants/:merchantId/api-keys", {
      params: { merchantId: target(req) },
      body: { name: (req.form.get("name") ?? "").trim(), type: req.form.get("type") ?? "secret" },
      idempotencyKey: formKey(req),
    });
    if (!result.ok) return keysView(req, undefined, { kind: "error", text: errorMessage(result) }, result.status);
    return keysView(req, secretBox(`New key ${result.body.name} of the chosen merchant`, result.body.key), { kind: "ok", text: "Key created." });
  });
  post(`${BASE}/keys/:keyId/:action`, async (req) => {
    const params = { keyId: req.params.keyId as string };
    if (req.params.action === "rotate") {
      const result = await call(req, "POST", "/v1/api-keys/:keyId/rotate", { params, body: {}, idempotencyKey: formKey(req) });
      if (!result.ok) return keysView(req, undefined, { kind: "error", text: errorMessage(result) }, result.status);
      return keysView(req, secretBox(`Rotated key ${result.body.name}`, result.body.key), { kind: "ok", text: "Key rotated; the old value no longer works." });
    }
    if (req.params.action !== "revoke") throw new ApiError(404, "resource_not_found", "No such action.");
    const result = await call(req, "DELETE", "/v1/api-keys/:keyId", { params, idempotencyKey: formKey(req) });
    if (!result.ok) return keysView(req, undefined, { kind: "error", text: errorMessage(result) }, result.status);
    return redirect(`${BASE}/keys?done=revoked`);
  });

  // Connector accounts (admin sessions, the admin API for the chosen merchant) and routing (the key's own merchant: no admin route).
  const accountsPath = "/admin/merchants/:merchantId/connector-accounts";
  const accountsView = async (req: DashRequest, flash?: Flash, status = 200) => {
    const { actor } = req.session;
    const routing = actor.scopes.has("payments:read") && !req.session.chosenMerchantId ? await call(req, "GET", "/v1/routing") : undefined;
    const accounts = actor.scopes.has("admin") ? await call(req, "GET", accountsPath, { params: { merchantId: target(req) }, query: { limit: "100" } }) : undefined;
    const chosen = req.session.chosenMerchantId ? await call<Merchant>(req, "GET", "/admin/merchants/:merchantId", { params: { merchantId: req.session.chosenMerchantId } }) : undefined;
    const whose = chosen?.ok ? `${chosen.body.short_id} (${chosen.body.name})` : undefined;
    return show(req, "Accounts & routing", `${BASE}/accounts`, accountsPage(req.session, routing?.ok ? routing.body : undefined, accounts?.ok ? accounts.body.data : undefined, whose), flash, status);
  };
  get(`${BASE}/accounts`, async (req) => accountsView(req, flashOf(req.event.url.searchParams)));
  post(`${BASE}/accounts`, async (req) => {
    const f = (name: string) => (req.form.get(name) ?? "").trim();
    const result = await call(req, "POST", accountsPath, {
      params: { merchantId: target(req) },
      body: { connector_id: f("connector_id"), mode: f("mode"), key_kind: f("key_kind"), label: f("label"), credential_ref: f("credential_ref"), is_default: f("is_default") === "true" },
      idempotencyKey: formKey(req),
    });
    if (!result.ok) return accountsView(req, { kind: "error", text: errorMessage(result) }, result.status);
    return accountsView(req, { kind: "ok", text: `Account ${result.body.short_id} added.` });
  });
  const accountView = async (req: DashRequest, caid: string, flash?: Flash, status = 200) => {
    const found = await call(req, "GET", `${accountsPath}/:caid`, { params: { merchantId: target(req), caid } });
    if (!found.ok) return answer(found.status, errorPage(found.status, errorMessage(found)));
    return show(req, `Account ${found.body.short_id}`, `${BASE}/accounts`, accountEditPage(req.session, found.body), flash, status);
  };
  get(`${BASE}/accounts/:caid`, async (req) => accountView(req, req.params.caid as string, flashOf(req.event.url.searchParams)));
  post(`${BASE}/accounts/:caid`, async (req) => {
    const caid = req.params.caid as string;
    const result = await call(req, "PATCH", `${accountsPath}/:caid`, {
      params: { merchantId: target(req), caid },
      body: { label: (req.form.get("label") ?? "").trim(), credential_ref: (req.form.get("credential_ref") ?? "").trim() },
      idempotencyKey: formKey(req),
    });
    if (!result.ok) return accountView(req, caid, { kind: "error", text: errorMessage(result) }, result.status);
    return redirect(`${BASE}/accounts/${encodeURIComponent(caid)}?done=saved`);
  });
  post(`${BASE}/accounts/routing`, async (req) => {
    const connectors = (req.form.get("connectors") ?? "").split(/[\s,]+/).filter(Boolean);
    const result = await call(req, "PUT", "/v1/routing", { body: { connectors }, idempotencyKey: formKey(req) });
    if (!result.ok) return accountsView(req, { kind: "error", text: errorMessage(result) }, result.status);
    return redirect(`${BASE}/accounts?done=routing`);
  });
  post(`${BASE}/accounts/:caid/default`, async (req) => {
    const result = await call(req, "PATCH", `${accountsPath}/:caid`, { params: { merchantId: target(req), caid: req.params.caid as string }, body: { is_default: req.form.get("is_default") === "true" }, idempotencyKey: formKey(req) });
    if (!result.ok) return accountsView(req, { kind: "error", text: errorMessage(result) }, result.status);
    return redirect(`${BASE}/accounts?done=default`);
  });

  h3.all(`${BASE}/**`, handle(`${BASE}/**`, async () => answer(404, errorPage(404, "There is no such dashboard page."))));
}
