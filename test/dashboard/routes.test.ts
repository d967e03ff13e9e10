import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, type TestServer } from "../support/harness";
import { auth } from "../support/seed";
import { CARDS, paymentsClient, seedSandboxMerchant } from "../support/payments";
import { issueSignInToken, IDLE_TIMEOUT_MS } from "../../server/dashboard/session";
import { dashboardClient, hiddenField, signedIn } from "./support";

let server: TestServer;
let shop: Awaited<ReturnType<typeof seedSandboxMerchant>>;
let other: Awaited<ReturnType<typeof seedSandboxMerchant>>;
let paymentId: string;
let otherPaymentId: string;

async function sale(key: string, amount: number, card: string = CARDS.approved): Promise<string> {
  const client = paymentsClient(server, key);
  const res = await client.sale({ amount, gateway_token: await client.token(card) });
  const body = await res.json();
  return body.id ?? body.error.payment_id;
}

beforeAll(async () => {
  server = await bootServer();
  shop = await seedSandboxMerchant(server, "Shop");
  other = await seedSandboxMerchant(server, "Other");
  paymentId = await sale(shop.secret, 5000);
  otherPaymentId = await sale(other.secret, 7000);
});
afterAll(() => server?.stop());

describe("sign-in and the session", () => {
  it("sends a visitor without a session to the sign-in page, which carries a strict CSP and no inline script", async () => {
    const client = dashboardClient(server);
    const res = await client.get("/dashboard/payments");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/sign-in");
    const page = await client.get("/dashboard/sign-in");
    expect(page.status).toBe(200);
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    const html = await page.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\son[a-z]+=/);
  });

  it("refuses a wrong key and a publishable key, and exchanges a secret key for an HttpOnly, SameSite=Strict cookie that is not the key", async () => {
    const client = dashboardClient(server);
    expect((await client.post("/dashboard/sign-in", { api_key: "sk_test_" + "x".repeat(32) })).status).toBe(401);
    expect((await client.post("/dashboard/sign-in", { api_key: shop.publishable })).status).toBe(403);
    const res = await client.post("/dashboard/sign-in", { api_key: shop.secret });
    expect(res.status).toBe(303);
    const cookie = res.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^paygate_session=[A-Za-z0-9_-]{40,};/);
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).not.toContain("Secure"); // plain HTTP here; TLS is covered below
    expect(cookie).not.toContain(shop.secret);
    const rows = await server.app.db.selectFrom("dashboard_sessions").selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(shop.secret);
    expect(JSON.stringify(rows)).not.toContain(cookie.split(";")[0]?.split("=")[1]);
    expect((await client.get("/dashboard")).status).toBe(200);
  });

  it("marks the cookie Secure when the dashboard is reached over TLS (through a trusted proxy)", async () => {
    const proxied = await bootServer({ env: { PAYGATE_TRUST_PROXY: "1" } });
    try {
      const m = await seedSandboxMerchant(proxied);
      const res = await proxied.request("/dashboard/sign-in", {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-proto": "https" },
        body: new URLSearchParams({ api_key: m.secret }).toString(),
      });
      expect(res.headers.get("set-cookie")).toContain("; Secure");
    } finally {
      await proxied.stop();
    }
  });

  it("ends the session on sign-out", async () => {
    const client = await signedIn(server, shop.secret);
    const page = await (await client.get("/dashboard")).text();
    const old = client.cookie;
    expect((await client.post("/dashboard/sign-out", { csrf: hiddenField(page, "csrf") })).status).toBe(303);
    client.cookie = old;
    expect((await client.get("/dashboard")).headers.get("location")).toBe("/dashboard/sign-in");
  });

  it("ends a session left idle past the timeout", async () => {
    const client = await signedIn(server, shop.secret);
    expect((await client.get("/dashboard")).status).toBe(200);
    await server.app.db.updateTable("dashboard_sessions").set({ last_seen_at: Date.now() - IDLE_TIMEOUT_MS - 1 }).execute();
    const res = await client.get("/dashboard");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/dashboard/sign-in");
  });

  it("ends every session of a key once the key is revoked", async () => {
    const m = await seedSandboxMerchant(server, "Revoked");
    const client = await signedIn(server, m.secret);
    expect((await client.get("/dashboard/payments")).status).toBe(200);
    const revoke = await server.request(`/v1/api-keys/${m.secretId}`, { method: "DELETE", headers: auth(m.admin) });
    expect(revoke.status).toBe(200);
    expect((await client.get("/dashboard/payments")).status).toBe(303);
  });

  it("ends every session and pending sign-in link of a key once the key is rotated", async () => {
    const m = await seedSandboxMerchant(server, "Rotated");
    const client = await signedIn(server, m.secret);
    const link = await issueSignInToken(server.app, m.secretId);
    expect((await client.get("/dashboard/payments")).status).toBe(200);
    const rotate = await server.request(`/v1/api-keys/${m.secretId}/rotate`, { method: "POST", headers: { ...auth(m.admin), "idempotency-key": `rotate-${m.secretId}` } });
    expect(rotate.status).toBe(200);
    expect((await client.get("/dashboard/payments")).status).toBe(303);
    expect((await dashboardClient(server).get(`/dashboard/sign-in/link?token=${link}`)).status).toBe(401);
  });

  it("signs in once with a one-time link, whose token is not the key", async () => {
    const token = await issueSignInToken(server.app, shop.secretId);
    expect(token).not.toContain(shop.secret);
    const first = dashboardClient(server);
    const res = await first.get(`/dashboard/sign-in/link?token=${token}`);
    expect(res.status).toBe(303);
    const cookie = res.headers.get("set-cookie")?.split(";")[0];
    first.cookie = cookie;
    expect((await first.get("/dashboard")).status).toBe(200);
    expect((await dashboardClient(server).get(`/dashboard/sign-in/link?token=${token}`)).status).toBe(401);
  });
});

describe("pages", () => {
  it("answers every page as HTML for a signed-in merchant", async () => {
    const client = await signedIn(server, shop.admin);
    for (const path of ["/dashboard", "/dashboard/payments", `/dashboard/payments/${paymentId}`, "/dashboard/webhooks", "/dashboard/webhooks/deliveries", "/dashboard/webhooks/dead", "/dashboard/keys", "/dashboard/accounts", `/dashboard/accounts/${shop.accountShortId}`]) {
      const res = await client.get(path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type"), path).toContain("text/html");
      expect(res.headers.get("content-security-policy"), path).toContain("frame-ancestors 'none'");
      expect(await res.text(), path).toContain("</html>");
    }
  });

  it("keeps the first page with its stylesheet and script under 100 KB", async () => {
    const client = await signedIn(server, shop.secret);
    let bytes = 0;
    for (const path of ["/dashboard", "/dashboard/assets/dashboard.css", "/dashboard/assets/dashboard.js"]) bytes += (await (await client.get(path)).arrayBuffer()).byteLength;
    expect(bytes).toBeGreaterThan(5_000);
    expect(bytes).toBeLessThan(100_000);
    console.log(`dashboard first page with assets: ${bytes} bytes`);
  });

  it("serves the assets from the bundle, under the same CSP", async () => {
    const res = await dashboardClient(server).get("/dashboard/assets/dashboard.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("javascript");
    expect(await res.text()).toContain("data-confirm");
  });

  it("does not show another merchant's payment by URL", async () => {
    const client = await signedIn(server, shop.secret);
    const res = await client.get(`/dashboard/payments/${otherPaymentId}`);
    expect(res.status).toBe(404);
    expect(await res.text()).not.toContain("7000");
    expect(await (await client.get(`/dashboard/payments/${paymentId}`)).text()).toContain("50.00 USD");
  });

  it("finds a payment by last4, amount and status with the list's filters", async () => {
    const declined = await sale(shop.secret, 1234, CARDS.generic_decline);
    const client = await signedIn(server, shop.secret);
    const byLast4 = await (await client.get("/dashboard/payments?last4=0002")).text();
    expect(byLast4).toContain(declined);
    expect(byLast4).not.toContain(paymentId);
    const byAmount = await (await client.get("/dashboard/payments?amount_gte=4000&status=succeeded")).text();
    expect(byAmount).toContain(paymentId);
    expect(byAmount).not.toContain(declined);
    // The same filters on the API's list, which the page calls.
    const api = async (query: string) => ((await (await server.request(`/v1/payments?limit=100&${query}`, { headers: auth(shop.secret) })).json()).data as Array<{ id: string }>).map((p) => p.id);
    expect(await api("last4=0002")).toEqual([declined]);
    expect(await api("amount_gte=1234&amount_lte=1234")).toEqual([declined]);
    expect(await api(`connector_account=${shop.accountShortId}`)).toContain(paymentId);
    expect(await api("connector_account=ca_nosuchthing")).toEqual([]);
    // Beyond the largest amount (and PostgreSQL's integer column): a 400, never a 500.
    for (const query of ["amount_gte=3000000000", "amount_lte=100000000"]) {
      const res = await server.request(`/v1/payments?${query}`, { headers: auth(shop.secret) });
      expect(res.status, query).toBe(400);
      expect((await res.json()).error, query).toMatchObject({ type: "invalid_request_error" });
    }
  });

  it("pages the list with a keyset cursor", async () => {
    const m = await seedSandboxMerchant(server, "Many");
    const ids: string[] = [];
    for (let i = 0; i < 27; i++) ids.push(await sale(m.secret, 100 + i));
    const client = await signedIn(server, m.secret);
    const first = await (await client.get("/dashboard/payments")).text();
    expect(first).toContain(ids[26]);
    expect(first).not.toContain(ids[1]);
    const next = /href="(\/dashboard\/payments\?[^"]*starting_after=[^"]+)"/.exec(first)?.[1]?.replace(/&amp;/g, "&");
    expect(next).toBeDefined();
    const second = await (await client.get(next as string)).text();
    expect(second).toContain(ids[0]);
    expect(second).not.toContain(ids[26]);
  });
});

describe("writes", () => {
  it("refunds part of a payment once, even when the same form is sent twice", async () => {
    const id = await sale(shop.secret, 5000);
    const client = await signedIn(server, shop.secret);
    const page = await (await client.get(`/dashboard/payments/${id}`)).text();
    const fields = { csrf: hiddenField(page, "csrf"), idempotency_key: hiddenField(page, "idempotency_key", "/refund"), amount: "12.50", reason: "damaged" };
    const first = await client.post(`/dashboard/payments/${id}/refund`, fields);
    expect(first.status).toBe(303);
    expect(first.headers.get("location")).toBe(`/dashboard/payments/${id}?done=refunded`);
    expect((await client.post(`/dashboard/payments/${id}/refund`, fields)).status).toBe(303);
    const payment = await (await paymentsClient(server, shop.secret).get(id)).json();
    expect(payment.amount_refunded).toBe(1250);
    expect(payment.refunds).toHaveLength(1);
    const after = await (await client.get(`/dashboard/payments/${id}?done=refunded`)).text();
    expect(after).toContain("payment.refunded");
    expect(after).toContain("Refund sent.");
  });

  it("refuses a refund amount with more decimals than the currency has (JPY 2.9, USD 0.019), never truncating it", async () => {
    const client = await signedIn(server, shop.secret);
    const api = paymentsClient(server, shop.secret);
    const yen = (await (await api.sale({ amount: 5000, currency: "jpy", gateway_token: await api.token() })).json()).id as string;
    const dollars = await sale(shop.secret, 5000);
    const refund = async (id: string, amount: string) => {
      const page = await (await client.get(`/dashboard/payments/${id}`)).text();
      return client.post(`/dashboard/payments/${id}/refund`, { csrf: hiddenField(page, "csrf"), idempotency_key: hiddenField(page, "idempotency_key", "/refund"), amount });
    };
    for (const amount of ["2.9", "10.99", "1.5", "2.0"]) {
      const res = await refund(yen, amount);
      expect(res.status, amount).toBe(400);
      expect(await res.text(), amount).toContain("no decimals (JPY), such as 5.");
    }
    for (const amount of ["0.001", "0.019", "5.000"]) {
      const res = await refund(dollars, amount);
      expect(res.status, amount).toBe(400);
      expect(await res.text(), amount).toContain("at most 2 decimals (USD), such as 5.00.");
    }
    expect((await (await api.get(yen)).json()).amount_refunded).toBe(0);
    expect((await (await api.get(dollars)).json()).amount_refunded).toBe(0);
    // What the currency can have still goes through, whole or with its decimals.
    expect((await refund(yen, "3")).status).toBe(303);
    expect((await refund(dollars, "0.5")).status).toBe(303);
    expect((await (await api.get(yen)).json()).amount_refunded).toBe(3);
    expect((await (await api.get(dollars)).json()).amount_refunded).toBe(50);
  });

  it("refuses a state-changing form without the session's CSRF token, or from another origin", async () => {
    const id = await sale(shop.secret, 3000);
    const client = await signedIn(server, shop.secret);
    const page = await (await client.get(`/dashboard/payments/${id}`)).text();
    const key = hiddenField(page, "idempotency_key", "/refund");
    expect((await client.post(`/dashboard/payments/${id}/refund`, { idempotency_key: key, amount: "1.00" })).status).toBe(403);
    expect((await client.post(`/dashboard/payments/${id}/refund`, { csrf: "wrong", idempotency_key: key, amount: "1.00" })).status).toBe(403);
    const foreign = await client.post(`/dashboard/payments/${id}/refund`, { csrf: hiddenField(page, "csrf"), idempotency_key: key, amount: "1.00" }, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    expect((await (await paymentsClient(server, shop.secret).get(id)).json()).amount_refunded).toBe(0);
  });

  it("gives a session exactly its key's rights: a read-only key sees no actions and cannot refund", async () => {
    const create = await server.request("/v1/api-keys", { method: "POST", headers: auth(shop.secret), json: { name: "reader", scopes: ["payments:read"] } });
    const reader = (await create.json()).key as string;
    const client = await signedIn(server, reader);
    const page = await (await client.get(`/dashboard/payments/${paymentId}`)).text();
    expect(page).toContain("This key cannot change payments.");
    const res = await client.post(`/dashboard/payments/${paymentId}/refund`, { csrf: hiddenField(page, "csrf"), idempotency_key: "dash_reader_1", amount: "1.00" });
    expect(res.status).toBe(403);
    expect(await res.text()).toContain("payments:write");
    expect((await client.get("/dashboard/webhooks/dead")).status).toBe(403);
  });
});

describe("keys, endpoints, accounts", () => {
  it("creates a key with its plaintext shown once, and revokes it, under the API's key rules", async () => {
    const client = await signedIn(server, shop.secret);
    const page = await (await client.get("/dashboard/keys")).text();
    const created = await client.post("/dashboard/keys", { csrf: hiddenField(page, "csrf"), idempotency_key: hiddenField(page, "idempotency_key", 'action="/dashboard/keys"'), name: "from the dashboard", type: "secret" });
    expect(created.status).toBe(200);
    const html = await created.text();
    const plaintext = /<code id="secret-value">(sk_test_\w+)<\/code>/.exec(html)?.[1] as string;
    expect((await server.request("/v1/payments", { headers: auth(plaintext) })).status).toBe(200);
    expect(await (await client.get("/dashboard/keys")).text()).not.toContain(plaintext);
    const id = (await (await server.request("/v1/api-keys?limit=100", { headers: auth(shop.secret) })).json()).data.find((k: { name: string }) => k.name === "from the dashboard").id;
    const listed = await (await client.get("/dashboard/keys")).text();
    const revoked = await client.post(`/dashboard/keys/${id}/revoke`, { csrf: hiddenField(listed, "csrf"), idempotency_key: hiddenField(listed, "idempotency_key", `/dashboard/keys/${id}/revoke`) });
    expect(revoked.status).toBe(303);
    expect((await server.request("/v1/payments", { headers: auth(plaintext) })).status).toBe(401);
    // The API's rule: a merchant key cannot manage an admin key; the dashboard does not list it either.
    expect(listed).not.toContain("secret-admin");
  });

  it("adds a webhook endpoint and shows its signing secret once", async () => {
    const client = await signedIn(server, shop.secret);
    const page = await (await client.get("/dashboard/webhooks")).text();
    const res = await client.post("/dashboard/webhooks", { csrf: hiddenField(page, "csrf"), idempotency_key: hiddenField(page, "idempotency_key", 'action="/dashboard/webhooks"'), url: "http://127.0.0.1:9/hooks", event_types: "*" });
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/<code id="secret-value">whsec_\w+<\/code>/);
    const again = await (await client.get("/dashboard/webhooks")).text();
    expect(again).toContain("http://127.0.0.1:9/hooks");
    expect(again).not.toContain("whsec_");
  });

  it("shows connector accounts to an admin session only", async () => {
    const admin = await (await (await signedIn(server, shop.admin)).get("/dashboard/accounts")).text();
    expect(admin).toContain(shop.accountShortId);
    const merchant = await (await (await signedIn(server, shop.secret)).get("/dashboard/accounts")).text();
    expect(merchant).not.toContain(shop.accountShortId);
    expect(merchant).toContain("managed with an admin key");
  });
});

describe("every other form", () => {
  /** Posts the form whose action is `action` on `page`, with its own CSRF token and Idempotency-Key. */
  const submit = async (client: Awaited<ReturnType<typeof signedIn>>, pagePath: string, action: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}) => {
    const page = await (await client.get(pagePath)).text();
    const key = page.includes(`action="${action}"`) ? hiddenField(page, "idempotency_key", `action="${action}"`) : "none";
    return client.post(action, { csrf: hiddenField(page, "csrf"), idempotency_key: key, ...fields }, headers);
  };

  it("disables, enables, tests, rotates and deletes an endpoint", async () => {
    const m = await seedSandboxMerchant(server, "Endpoints");
    const created = await (await server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(m.secret), json: { url: "http://127.0.0.1:9/x", event_types: ["*"] } })).json();
    const client = await signedIn(server, m.secret);
    const status = async () => (await (await server.request(`/v1/webhook_endpoints/${created.id}`, { headers: auth(m.secret) })).json()).status;
    expect((await submit(client, "/dashboard/webhooks", `/dashboard/webhooks/${created.id}/disable`)).status).toBe(303);
    expect(await status()).toBe("disabled");
    expect((await submit(client, "/dashboard/webhooks", `/dashboard/webhooks/${created.id}/enable`)).status).toBe(303);
    expect(await status()).toBe("enabled");
    const tested = await submit(client, "/dashboard/webhooks", `/dashboard/webhooks/${created.id}/test`);
    expect(await tested.text()).toContain("Test event not delivered");
    const rotated = await submit(client, "/dashboard/webhooks", `/dashboard/webhooks/${created.id}/rotate`);
    const secret = /<code id="secret-value">(whsec_\w+)<\/code>/.exec(await rotated.text())?.[1];
    expect(secret).toBeDefined();
    expect(secret).not.toBe(created.secret);
    expect((await submit(client, "/dashboard/webhooks", `/dashboard/webhooks/${created.id}/delete`)).status).toBe(303);
    expect((await server.request(`/v1/webhook_endpoints/${created.id}`, { headers: auth(m.secret) })).status).toBe(404);
  });

  it("replays one dead letter as a fragment, and all of a merchant's dead letters, through the API's replay", async () => {
    const m = await seedSandboxMerchant(server, "Dead letters");
    const endpoint = await (await server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(m.secret), json: { url: "http://127.0.0.1:9/x", event_types: ["*"] } })).json();
    const paymentOf = await sale(m.secret, 2500);
    // Kill the deliveries as the dispatcher would after its last retry.
    await server.app.db.updateTable("webhook_deliveries").set({ status: "dead", next_attempt_at: null }).where("endpoint_id", "=", endpoint.id).execute();
    const dead = await server.app.db.selectFrom("webhook_deliveries").select("id").where("endpoint_id", "=", endpoint.id).execute();
    expect(dead.length).toBeGreaterThanOrEqual(2);
    const client = await signedIn(server, m.secret);
    const list = await (await client.get("/dashboard/webhooks/dead")).text();
    expect(list).toContain(paymentOf);
    const one = dead[0]?.id as string;
    const fragment = await submit(client, "/dashboard/webhooks/dead", `/dashboard/webhooks/dead/${one}/replay`, {}, { "x-dashboard-fragment": "1" });
    const row = await fragment.text();
    expect(row).toMatch(new RegExp(`^<tr id="dlq-${one}" data-poll="/dashboard/webhooks/dead/${one}/row">`));
    expect((await client.get(`/dashboard/webhooks/dead/${one}/row`)).status).toBe(200);
    expect((await submit(client, "/dashboard/webhooks/dead", "/dashboard/webhooks/dead/replay")).status).toBe(303);
    const states = await server.app.db.selectFrom("webhook_deliveries").select("status").where("endpoint_id", "=", endpoint.id).execute();
    expect(states.every((s) => s.status !== "dead")).toBe(true);
    // Another merchant's session cannot see or replay them.
    const stranger = await signedIn(server, shop.secret);
    expect((await stranger.get(`/dashboard/webhooks/dead/${one}/row`)).status).toBe(404);
  });

  it("rotates a key and shows the new plaintext once", async () => {
    const m = await seedSandboxMerchant(server, "Rotate");
    const create = await (await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: { name: "to rotate" } })).json();
    const client = await signedIn(server, m.secret);
    const res = await submit(client, "/dashboard/keys", `/dashboard/keys/${create.id}/rotate`);
    const fresh = /<code id="secret-value">(sk_test_\w+)<\/code>/.exec(await res.text())?.[1] as string;
    expect(fresh).not.toBe(create.key);
    expect((await server.request("/v1/payments", { headers: auth(fresh) })).status).toBe(200);
    expect((await server.request("/v1/payments", { headers: auth(create.key) })).status).toBe(401);
  });

  it("sets the routing order, and lets an admin add, edit and make default a connector account", async () => {
    const m = await seedSandboxMerchant(server, "Routing");
    const client = await signedIn(server, m.admin);
    expect((await submit(client, "/dashboard/accounts", "/dashboard/accounts/routing", { connectors: "mock" })).status).toBe(303);
    expect((await (await server.request("/v1/routing", { headers: auth(m.secret) })).json()).connectors).toEqual(["mock"]);
    const added = await submit(client, "/dashboard/accounts", "/dashboard/accounts", { connector_id: "mock", mode: "test", key_kind: "api_key", label: "second", credential_ref: "env://DASHBOARD_TEST_NOPE" });
    const shortId = /Account (ca_\w+) added/.exec(await added.text())?.[1] as string;
    expect(shortId).toBeDefined();
    // The API's rule: one default per connector, mode and key kind; the old one is unset first.
    const refusedDefault = await submit(client, "/dashboard/accounts", `/dashboard/accounts/${shortId}/default`, { is_default: "true" });
    expect(refusedDefault.status).toBe(409);
    expect(await refusedDefault.text()).toContain("Unset it first");
    expect((await submit(client, "/dashboard/accounts", `/dashboard/accounts/${m.accountShortId}/default`, { is_default: "false" })).status).toBe(303);
    expect((await submit(client, "/dashboard/accounts", `/dashboard/accounts/${shortId}/default`, { is_default: "true" })).status).toBe(303);
    const accounts = (await (await server.request(`/admin/merchants/${m.merchant.id}/connector-accounts`, { headers: auth(m.admin) })).json()).data;
    expect(accounts.find((a: { short_id: string }) => a.short_id === shortId).is_default).toBe(true);
    const edited = await submit(client, `/dashboard/accounts/${shortId}`, `/dashboard/accounts/${shortId}`, { label: "renamed", credential_ref: "env://DASHBOARD_TEST_OTHER" });
    expect(edited.status).toBe(303);
    const page = await (await client.get(edited.headers.get("location") as string)).text();
    expect(page).toContain('value="renamed"');
    expect(page).toContain("Account saved.");
    expect((await submit(client, `/dashboard/accounts/${shortId}`, `/dashboard/accounts/${shortId}`, { label: "x", credential_ref: "plain-secret" })).status).toBe(400);
    // A merchant key has no admin scope: the admin form is refused by the API's route.
    const merchant = await signedIn(server, m.secret);
    const refused = await submit(merchant, "/dashboard/accounts", "/dashboard/accounts", { connector_id: "mock", mode: "test", key_kind: "api_key", label: "x", credential_ref: "env://DASHBOARD_TEST_X" });
    expect(refused.status).toBe(403);
  });
});

describe("the merchant switcher of admin sessions", () => {
  const chosenOf = async (client: Awaited<ReturnType<typeof signedIn>>) => {
    const rows = await server.app.db.selectFrom("dashboard_sessions").select("chosen_merchant_id").execute();
    expect(client.cookie).toBeDefined();
    return rows.map((r) => r.chosen_merchant_id);
  };
  const switchTo = async (client: Awaited<ReturnType<typeof signedIn>>, merchantId: string, back: string) => {
    const page = await (await client.get("/dashboard")).text();
    return client.post("/dashboard/merchant", { csrf: hiddenField(page, "csrf"), merchant_id: merchantId, back });
  };

  it("lets an admin session choose a merchant and act on its connector accounts and keys through the admin API", async () => {
    const m = await seedSandboxMerchant(server, "Switcher admin");
    const target = await seedSandboxMerchant(server, "Switcher target");
    const targetPayment = await sale(target.secret, 3300);
    const client = await signedIn(server, m.admin);
    const overview = await (await client.get("/dashboard")).text();
    expect(overview).toContain('<label for="merchant-switch">Merchant<select id="merchant-switch" name="merchant_id">');
    expect(overview).toContain(`<option value="${target.merchant.id}">${target.merchant.short_id} · Switcher target</option>`);

    const switched = await switchTo(client, target.merchant.short_id, "/dashboard/accounts");
    expect(switched.status).toBe(303);
    expect(switched.headers.get("location")).toBe("/dashboard/accounts");
    expect(await chosenOf(client)).toContain(target.merchant.id);
    const accounts = await (await client.get("/dashboard/accounts")).text();
    expect(accounts).toContain(target.accountShortId);
    expect(accounts).not.toContain(m.accountShortId);
    expect(accounts).toContain(`<option value="${target.merchant.id}" selected>`);
    expect(accounts).toContain("Routing is set with each merchant's own key");

    const added = await client.post("/dashboard/accounts", {
      csrf: hiddenField(accounts, "csrf"),
      idempotency_key: hiddenField(accounts, "idempotency_key", 'action="/dashboard/accounts"'),
      connector_id: "mock",
      mode: "test",
      key_kind: "api_key",
      label: "added for the target",
      credential_ref: "env://DASHBOARD_TEST_TARGET",
    });
    expect(added.status).toBe(200);
    const theirs = (await (await server.request(`/admin/merchants/${target.merchant.id}/connector-accounts`, { headers: auth(m.admin) })).json()).data;
    expect(theirs.map((a: { label: string }) => a.label)).toContain("added for the target");

    // No admin route reads another merchant's payments: the page says it shows the key's own.
    const payments = await (await client.get("/dashboard/payments")).text();
    expect(payments).toContain("This page shows the admin key's own merchant");
    expect(payments).not.toContain(targetPayment);

    const keys = await (await client.get("/dashboard/keys")).text();
    const created = await client.post("/dashboard/keys/chosen", { csrf: hiddenField(keys, "csrf"), idempotency_key: hiddenField(keys, "idempotency_key", 'action="/dashboard/keys/chosen"'), name: "minted by an admin", type: "secret" });
    expect(created.status).toBe(200);
    const plaintext = /<code id="secret-value">(sk_test_\w+)<\/code>/.exec(await created.text())?.[1] as string;
    const seen = (await (await server.request("/v1/payments", { headers: auth(plaintext) })).json()).data.map((p: { id: string }) => p.id);
    expect(seen).toContain(targetPayment);

    expect((await switchTo(client, "mrc_nosuchmerchant", "/dashboard")).status).toBe(404);
    expect((await switchTo(client, m.merchant.id, "https://elsewhere.example/")).headers.get("location")).toBe("/dashboard");
    expect(await (await client.get("/dashboard/accounts")).text()).toContain(m.accountShortId);
  });

  it("shows a merchant session no switcher, and a forged choice changes nothing", async () => {
    const m = await seedSandboxMerchant(server, "Switcher merchant");
    const client = await signedIn(server, m.secret);
    const page = await (await client.get("/dashboard")).text();
    expect(page).not.toContain("merchant-switch");
    const forged = await client.post("/dashboard/merchant", { csrf: hiddenField(page, "csrf"), merchant_id: other.merchant.id, back: "/dashboard/accounts" });
    expect(forged.status).toBe(403);
    const sessions = server.app.db.selectFrom("dashboard_sessions").innerJoin("api_keys", "api_keys.id", "dashboard_sessions.api_key_id").where("api_keys.merchant_id", "=", m.merchant.id);
    expect((await sessions.select("chosen_merchant_id").execute()).map((r) => r.chosen_merchant_id)).toEqual([null]);
    // Even a choice written into the row is ignored for a key without the admin scope.
    await server.app.db.updateTable("dashboard_sessions").set({ chosen_merchant_id: other.merchant.id }).execute();
    const accounts = await (await client.get("/dashboard/accounts")).text();
    expect(accounts).not.toContain(other.accountShortId);
    expect(accounts).toContain("managed with an admin key");
    const keys = await (await client.get("/dashboard/keys")).text();
    const minted = await client.post("/dashboard/keys/chosen", { csrf: hiddenField(keys, "csrf"), idempotency_key: "dash_forged_1", name: "forged", type: "secret" });
    expect(minted.status).toBe(403);
    await server.app.db.updateTable("dashboard_sessions").set({ chosen_merchant_id: null }).execute();
  });
});
