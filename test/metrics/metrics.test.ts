/**
 * GET /metrics over HTTP: a known workload (sales, declines, webhook deliveries to real
 * local receivers, one of which fails into the dead-letter queue) moves each counter by
 * exactly that workload; gauges read the database at scrape time; access is loopback
 * or the metrics token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config";
import { metricsRefusal } from "../../server/metrics/access";
import { startWebhookReceiver, type WebhookReceiver } from "../fakes/webhook-receiver";
import { bootServer, type TestServer } from "../support/harness";
import { CARDS, paymentsClient, seedSandboxMerchant } from "../support/payments";
import { createEndpoint, emitEvent } from "../webhooks/support";

type Samples = Map<string, number>;

/** Prometheus text format → `name{labels}` (labels sorted as printed) → value. */
function parse(text: string): Samples {
  const samples: Samples = new Map();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

/** The sample named `name` whose labels include all of `labels`, summed (0 when none). */
function value(samples: Samples, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const [key, v] of samples) {
    const brace = key.indexOf("{");
    if ((brace === -1 ? key : key.slice(0, brace)) !== name) continue;
    if (Object.entries(labels).every(([k, l]) => key.includes(`${k}="${l}"`))) sum += v;
  }
  return sum;
}

describe("GET /metrics after a known workload", () => {
  const N = 3;
  const M = 2;
  let server: TestServer;
  let ok: WebhookReceiver;
  let failing: WebhookReceiver;
  let shop: Awaited<ReturnType<typeof seedSandboxMerchant>>;
  beforeAll(async () => {
    server = await bootServer({ env: { PAYGATE_WEBHOOK_RETRY_SCHEDULE: "200ms" } });
    shop = await seedSandboxMerchant(server);
    ok = await startWebhookReceiver();
    failing = await startWebhookReceiver({ status: 500 });
  });
  afterAll(async () => {
    await server.stop();
    await ok.close();
    await failing.close();
  });

  const scrape = async () => {
    const res = await server.request("/metrics");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    return { text: await (res.clone() as Response).text(), samples: parse(await res.text()) };
  };

  it("counts exactly the requests, payments, processor calls and webhook attempts of the workload", async () => {
    const client = paymentsClient(server, shop.secret);
    // Delivered: one per decline. Dead: one per sale's capture event, after 2 attempts (schedule "200ms").
    await createEndpoint(server, shop.secret, { url: ok.url, event_types: ["payment.failed"] });
    await createEndpoint(server, shop.secret, { url: failing.url, event_types: ["payment.captured"] });
    const approved = await client.token(CARDS.approved);
    const declined = await client.token(CARDS.insufficient_funds);
    const before = (await scrape()).samples;

    for (let i = 0; i < N; i++) expect((await client.sale({ amount: 1000 + i, gateway_token: approved })).status).toBe(201);
    for (let i = 0; i < M; i++) expect((await client.sale({ amount: 2000 + i, gateway_token: declined })).status).toBe(502);
    await ok.waitUntil((r) => r.length === M, 10_000);
    await failing.waitUntil((r) => r.length === 2 * N, 10_000);
    await expect.poll(async () => value((await scrape()).samples, "paygate_webhook_dead_letter_deliveries"), { timeout: 5_000 }).toBe(N);
    // The receiver has the request before the dispatcher has committed its outcome and counted it.
    const delivered = { outcome: "delivered" };
    await expect.poll(async () => value((await scrape()).samples, "paygate_webhook_delivery_attempts_total", delivered) - value(before, "paygate_webhook_delivery_attempts_total", delivered), { timeout: 5_000 }).toBe(M);

    const { text, samples: after } = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) => value(after, name, labels) - value(before, name, labels);
    const sale = { route: "/v1/payments/sale", method: "POST" };
    expect(moved("paygate_http_requests_total", { ...sale, status: "201" })).toBe(N);
    expect(moved("paygate_http_requests_total", { ...sale, status: "502" })).toBe(M);
    expect(moved("paygate_http_request_duration_seconds_count", sale)).toBe(N + M);
    expect(moved("paygate_payments_total", { connector: "mock", mode: "test", status: "succeeded" })).toBe(N);
    expect(moved("paygate_payments_total", { connector: "mock", mode: "test", status: "failed" })).toBe(M);
    expect(moved("paygate_payments_total")).toBe(N + M);
    expect(moved("paygate_connector_calls_total", { connector: "mock", operation: "authorize", outcome: "approved" })).toBe(N);
    expect(moved("paygate_connector_calls_total", { connector: "mock", operation: "authorize", outcome: "declined" })).toBe(M);
    expect(moved("paygate_connector_call_duration_seconds_count", { connector: "mock", operation: "authorize" })).toBe(N + M);
    expect(moved("paygate_webhook_delivery_attempts_total", { outcome: "delivered" })).toBe(M);
    expect(moved("paygate_webhook_delivery_attempts_total", { outcome: "retry" })).toBe(N);
    expect(moved("paygate_webhook_delivery_attempts_total", { outcome: "dead" })).toBe(N);
    expect(value(after, "paygate_webhook_pending_deliveries")).toBe(0);
    expect(value(after, "paygate_webhook_outbox_lag_seconds")).toBe(0);
    // Every payment and attempt above is at least one write; groups hold one or more.
    expect(moved("paygate_group_commit_batch_size_sum")).toBeGreaterThanOrEqual(N + M + 2 * N + M);
    expect(moved("paygate_group_commit_batch_size_count")).toBeGreaterThan(0);
    expect(value(after, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    expect(value(after, "nodejs_heap_size_used_bytes")).toBeGreaterThan(0);

    for (const secret of [shop.merchant.id, shop.merchant.short_id, shop.secretId, shop.accountId, shop.accountShortId]) expect(text).not.toContain(secret);
  });

  it("counts a follow-on under the status it reached and its processor call under its operation", async () => {
    const client = paymentsClient(server, shop.secret);
    const token = await client.token(CARDS.approved);
    const before = (await scrape()).samples;
    const auth = await client.authorize({ amount: 900, gateway_token: token, capture_method: "manual" });
    expect((await client.capture({ payment_id: (await auth.json()).id })).status).toBe(200);
    const after = (await scrape()).samples;
    const moved = (name: string, labels: Record<string, string>) => value(after, name, labels) - value(before, name, labels);
    expect(moved("paygate_payments_total", { status: "authorized" })).toBe(1);
    expect(moved("paygate_payments_total", { status: "succeeded" })).toBe(1);
    expect(moved("paygate_connector_calls_total", { operation: "capture", outcome: "approved" })).toBe(1);
    // Its payment.captured delivery fails into the dead-letter queue too; the next test starts with nothing pending.
    await expect.poll(async () => value((await scrape()).samples, "paygate_webhook_dead_letter_deliveries"), { timeout: 5_000 }).toBe(N + 1);
  });

  it("outbox lag is the age of the oldest due delivery, read from the database; a scheduled retry is not due", async () => {
    await server.app.webhooks.stop();
    const delay = async (eventId: string, by: number) =>
      server.app.db.updateTable("webhook_deliveries").set({ next_attempt_at: Date.now() + by }).where("event_id", "=", eventId).execute();
    await delay((await emitEvent(server, shop.merchant.id, "payment.failed")).id, 3_600_000);
    const scheduled = (await scrape()).samples;
    expect(value(scheduled, "paygate_webhook_pending_deliveries")).toBe(1);
    expect(value(scheduled, "paygate_webhook_outbox_lag_seconds")).toBe(0);

    await delay((await emitEvent(server, shop.merchant.id, "payment.failed")).id, -90_000);
    const due = (await scrape()).samples;
    expect(value(due, "paygate_webhook_pending_deliveries")).toBe(2);
    expect(value(due, "paygate_webhook_outbox_lag_seconds")).toBeGreaterThanOrEqual(90);
    expect(value(due, "paygate_webhook_outbox_lag_seconds")).toBeLessThan(600);
  });

  it("keeps the route table's answers: 405 with Allow on /metrics, 404 elsewhere; an API key is not needed", async () => {
    const post = await server.request("/metrics", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET");
    expect((await post.json()).error.code).toBe("method_not_allowed");
    const before = (await scrape()).samples;
    expect((await server.request("/metrics/extra")).status).toBe(404);
    expect((await server.request("/v1/payments", { method: "PUT" })).status).toBe(405);
    const after = (await scrape()).samples;
    const moved = (labels: Record<string, string>) => value(after, "paygate_http_requests_total", labels) - value(before, "paygate_http_requests_total", labels);
    expect(moved({ route: "(unmatched)", method: "GET", status: "404" })).toBe(1);
    expect(moved({ route: "/v1/payments", method: "PUT", status: "405" })).toBe(1);
  });

  it("a metrics token shorter than 16 characters stops the start", () => {
    expect(() => loadConfig({ data: "/tmp/x" }, { PAYGATE_METRICS_TOKEN: "short" })).toThrow(/PAYGATE_METRICS_TOKEN/);
  });
});

describe("GET /metrics with PAYGATE_METRICS_TOKEN", () => {
  const TOKEN = "metrics-token-0123456789";
  let server: TestServer;
  beforeAll(async () => {
    server = await bootServer({ env: { PAYGATE_METRICS_TOKEN: TOKEN } });
  });
  afterAll(() => server.stop());

  it("requires the token as a bearer token, even from loopback; an API key does not open it", async () => {
    const shop = await seedSandboxMerchant(server);
    const none = await server.request("/metrics");
    expect(none.status).toBe(401);
    expect((await none.json()).error).toMatchObject({ type: "authentication_error", code: "authentication_required" });
    expect((await server.request("/metrics", { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
    expect((await server.request("/metrics", { headers: { authorization: `Bearer ${shop.admin}` } })).status).toBe(401);
    const good = await server.request("/metrics", { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(good.status).toBe(200);
    expect(await good.text()).toContain("paygate_http_requests_total");
  });
});

describe("who may scrape (the decision)", () => {
  it("without a token: loopback peers only", () => {
    for (const peer of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"]) expect(metricsRefusal(peer, null, undefined)).toBeUndefined();
    for (const peer of ["10.0.0.5", "192.168.1.2", "::ffff:10.0.0.1", "fe80::1", "2001:db8::1", undefined]) {
      expect(metricsRefusal(peer, "Bearer anything", undefined)).toMatchObject({ status: 403, code: "metrics_forbidden" });
    }
  });

  it("with a token: the token, from anywhere, and nothing else", () => {
    const token = "0123456789abcdef";
    for (const peer of ["10.0.0.5", "127.0.0.1"]) {
      expect(metricsRefusal(peer, `Bearer ${token}`, token)).toBeUndefined();
      expect(metricsRefusal(peer, null, token)).toMatchObject({ status: 401 });
      expect(metricsRefusal(peer, `Bearer ${token}0`, token)).toMatchObject({ status: 401 });
      expect(metricsRefusal(peer, token, token)).toMatchObject({ status: 401 });
    }
  });
});

describe("/metrics behind a trusted proxy", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await bootServer({ env: { PAYGATE_TRUST_PROXY: "1" } });
  });
  afterAll(() => server.stop());

  it("judges the forwarded client, not the local proxy: a remote client is refused without a token", async () => {
    const remote = await server.request("/metrics", { headers: { "x-forwarded-for": "203.0.113.9" } });
    expect(remote.status).toBe(403);
    expect((await remote.json()).error.code).toBe("metrics_forbidden");
    expect((await server.request("/metrics", { headers: { "x-forwarded-for": "127.0.0.1" } })).status).toBe(200);
    expect((await server.request("/metrics")).status).toBe(200);
  });
});
