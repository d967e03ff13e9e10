import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, type TestServer } from "../support/harness";
import { auth, liveSecretKey, seedMerchant, type SeededMerchant } from "../support/seed";
import { createEndpoint } from "./support";
import { expectStored, storedData } from "../support/raw-files";
import { expectError } from "../support/errors";

describe("webhook endpoints API", () => {
  let server: TestServer;
  let m: SeededMerchant;
  let other: SeededMerchant;
  let live: SeededMerchant;
  beforeAll(async () => {
    server = await bootServer();
    m = await seedMerchant(server, "Endpoints Merchant");
    other = await seedMerchant(server, "Other Merchant");
    live = await seedMerchant(server, "Live Merchant", "live");
  });
  afterAll(() => server.stop());

  const post = (key: string, body: unknown, idem?: string) => server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(key, idem), json: body });
  const get = (key: string, path: string) => server.request(path, { headers: { authorization: `Bearer ${key}` } });

  it("creates an endpoint and shows its secret only in the create answer", async () => {
    const res = await post(m.secret, { url: "https://example.com/hooks", event_types: ["payment.captured", "payment.failed"], description: "orders" });
    expect(res.status).toBe(201);
    const created = await res.json();
    expect(created).toEqual({
      id: expect.stringMatching(/^we_[a-z0-9]{16}$/),
      object: "webhook_endpoint",
      url: "https://example.com/hooks",
      event_types: ["payment.captured", "payment.failed"],
      description: "orders",
      status: "enabled",
      secret: expect.stringMatching(/^whsec_[a-z0-9]{32}$/),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: created.created_at,
    });
    const fetched = await (await get(m.secret, `/v1/webhook_endpoints/${created.id}`)).json();
    const { secret: _secret, ...withoutSecret } = created;
    expect(fetched).toEqual(withoutSecret);
    const list = await (await get(m.secret, "/v1/webhook_endpoints")).json();
    expect(list.object).toBe("list");
    expect(list.data.map((e: { id: string }) => e.id)).toContain(created.id);
    expect(JSON.stringify(list)).not.toContain(created.secret);
  });

  it("replays a create with the same Idempotency-Key without the secret", async () => {
    const body = { url: "https://example.com/idem", event_types: ["*"] };
    const first = await post(m.secret, body, "create-endpoint-once");
    const replay = await post(m.secret, body, "create-endpoint-once");
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const [a, b] = [await first.json(), await replay.json()];
    expect(b.id).toBe(a.id);
    expect(a.secret).toMatch(/^whsec_/);
    expect(b.secret).toBeUndefined();
  });

  it("validates the body", async () => {
    const bad = async (body: unknown) => (await post(m.secret, body)).json().then((r) => r.error);
    expect(await bad({ url: "https://example.com", event_types: ["payment.exploded"] })).toMatchObject({ code: "parameter_invalid", param: "event_types[0]" });
    expect(await bad({ url: "https://example.com", event_types: [] })).toMatchObject({ code: "parameter_invalid", param: "event_types" });
    expect(await bad({ url: "https://example.com", event_types: "*" })).toMatchObject({ code: "parameter_invalid", param: "event_types" });
    expect(await bad({ event_types: ["*"] })).toMatchObject({ code: "parameter_missing", param: "url" });
    expect(await bad({ url: "https://example.com", event_types: ["*"], colour: "red" })).toMatchObject({ code: "parameter_unknown", param: "colour" });
    expect(await bad({ url: "example.com/hooks", event_types: ["*"] })).toMatchObject({ code: "parameter_invalid", param: "url" });
    expect(await bad({ url: "ftp://example.com/hooks", event_types: ["*"] })).toMatchObject({ code: "parameter_invalid", param: "url" });
    expect(await bad({ url: "https://user:pw@example.com/hooks", event_types: ["*"] })).toMatchObject({ code: "parameter_invalid", param: "url" });
  });

  it("test mode allows http:// and loopback, but not private or link-local targets", async () => {
    for (const url of ["http://127.0.0.1:9/hooks", "http://localhost:9/hooks", "http://[::1]:9/hooks", "http://example.com/hooks"]) {
      expect((await post(m.secret, { url, event_types: ["*"] })).status, url).toBe(201);
    }
    for (const url of ["http://10.0.0.8/hooks", "http://169.254.169.254/latest/meta-data", "http://192.168.1.1/"]) {
      const res = await post(m.secret, { url, event_types: ["*"] });
      expect(await expectError(res, 400, "parameter_invalid"), url).toMatchObject({ param: "url" });
    }
  });

  it("live mode requires https:// and refuses loopback, private, link-local, unspecified and CGNAT hosts", async () => {
    const cases: Array<[string, RegExp]> = [
      ["http://example.com/hooks", /live-mode endpoints must use https:\/\//],
      ["https://127.0.0.1/hooks", /127\.0\.0\.1 is a loopback address/],
      ["https://localhost/hooks", /localhost is a loopback name/],
      ["https://api.localhost/hooks", /loopback name/],
      ["https://[::1]/hooks", /::1 is a loopback address/],
      ["https://10.1.2.3/hooks", /private address/],
      ["https://172.20.0.1/hooks", /private address/],
      ["https://192.168.0.10/hooks", /private address/],
      ["https://[fd12::1]/hooks", /private address/],
      ["https://169.254.169.254/hooks", /link-local address/],
      ["https://[fe80::1]/hooks", /link-local address/],
      ["https://0.0.0.0/hooks", /unspecified address/],
      ["https://100.64.1.1/hooks", /CGNAT address/],
      ["https://[::ffff:10.0.0.1]/hooks", /private address/],
      ["https://2130706433/hooks", /127\.0\.0\.1 is a loopback address/],
    ];
    for (const [url, message] of cases) {
      const res = await post(live.secret, { url, event_types: ["*"] });
      expect(res.status, url).toBe(400);
      const { error } = await res.json();
      expect(error, url).toMatchObject({ type: "invalid_request_error", code: "parameter_invalid", param: "url" });
      expect(error.message, url).toMatch(message);
    }
    expect((await post(live.secret, { url: "https://hooks.example.com/paygate", event_types: ["*"] })).status).toBe(201);
  });

  it("updates with PATCH (no Idempotency-Key needed) and checks the new URL", async () => {
    const endpoint = await createEndpoint(server, m.secret, { url: "https://example.com/a", event_types: ["payment.captured"], description: "first" });
    const patch = (body: unknown) =>
      server.request(`/v1/webhook_endpoints/${endpoint.id}`, { method: "PATCH", headers: { authorization: `Bearer ${m.secret}` }, json: body });
    const res = await patch({ url: "https://example.com/b", event_types: ["*"], description: null, status: "disabled" });
    expect(res.status).toBe(200);
    const updated = await res.json();
    expect(updated).toMatchObject({ id: endpoint.id, url: "https://example.com/b", event_types: ["*"], description: null, status: "disabled" });
    expect(updated.secret).toBeUndefined();
    expect(await expectError(await patch({ status: "paused" }), 400, "parameter_invalid")).toMatchObject({ param: "status" });
    expect(await expectError(await patch({ url: "https://user:pw@example.com/" }), 400, "parameter_invalid")).toMatchObject({ param: "url" });
    expect((await patch({ status: "enabled" })).status).toBe(200);
    const live2 = await createEndpoint(server, live.secret, { url: "https://example.com/live", event_types: ["*"] });
    const livePatch = await server.request(`/v1/webhook_endpoints/${live2.id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${live.secret}` },
      json: { url: "http://example.com/live" },
    });
    expect((await livePatch.json()).error).toMatchObject({ code: "parameter_invalid", param: "url" });
  });

  it("deletes, after which the endpoint is gone", async () => {
    const endpoint = await createEndpoint(server, m.secret, { url: "https://example.com/del", event_types: ["*"] });
    const res = await server.request(`/v1/webhook_endpoints/${endpoint.id}`, { method: "DELETE", headers: { authorization: `Bearer ${m.secret}` } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ id: endpoint.id, object: "webhook_endpoint", deleted: true });
    const gone = await get(m.secret, `/v1/webhook_endpoints/${endpoint.id}`);
    expect(gone.status).toBe(404);
    expect((await gone.json()).error.code).toBe("webhook_endpoint_not_found");
  });

  it("hides another merchant's and another mode's endpoints (404)", async () => {
    const endpoint = await createEndpoint(server, m.secret, { url: "https://example.com/mine", event_types: ["*"] });
    for (const key of [other.secret, live.secret]) {
      for (const [method, path] of [
        ["GET", `/v1/webhook_endpoints/${endpoint.id}`],
        ["PATCH", `/v1/webhook_endpoints/${endpoint.id}`],
        ["DELETE", `/v1/webhook_endpoints/${endpoint.id}`],
        ["POST", `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`],
        ["POST", `/v1/webhook_endpoints/${endpoint.id}/test`],
      ] as const) {
        const res = await server.request(path, { method, headers: auth(key), ...(method === "GET" || method === "DELETE" ? {} : { json: {} }) });
        expect(res.status, `${method} ${path}`).toBe(404);
        expect((await res.json()).error.code).toBe("webhook_endpoint_not_found");
      }
      const list = await (await get(key, "/v1/webhook_endpoints?limit=100")).json();
      expect(list.data.map((e: { id: string }) => e.id)).not.toContain(endpoint.id);
    }
  });

  it("needs webhooks:write to change endpoints, webhooks:read to see them", async () => {
    const created = await (await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: { name: "reader", scopes: ["webhooks:read"] } })).json();
    expect((await get(created.key, "/v1/webhook_endpoints")).status).toBe(200);
    // Events carry payment data: a webhooks-only key does not read them (test/keys/event-scopes.test.ts).
    expect((await get(created.key, "/v1/events")).status).toBe(403);
    const res = await post(created.key, { url: "https://example.com/x", event_types: ["*"] });
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe("insufficient_permissions");
  });

  it("caps endpoints at 16 per merchant and mode with 400 webhook_endpoint_limit_reached", async () => {
    const capped = await seedMerchant(server, "Capped Merchant");
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) ids.push((await createEndpoint(server, capped.secret, { url: `https://example.com/cap/${i}`, event_types: ["*"] })).id);
    const over = await post(capped.secret, { url: "https://example.com/cap/16", event_types: ["*"] });
    expect(over.status).toBe(400);
    expect((await over.json()).error).toMatchObject({ type: "invalid_request_error", code: "webhook_endpoint_limit_reached", message: expect.stringMatching(/16/) });
    const liveKey = await liveSecretKey(server, capped.merchant.id);
    expect((await post(liveKey, { url: "https://example.com/cap/live", event_types: ["*"] })).status).toBe(201);
    await server.request(`/v1/webhook_endpoints/${ids[0]}`, { method: "DELETE", headers: auth(capped.secret) });
    expect((await post(capped.secret, { url: "https://example.com/cap/again", event_types: ["*"] })).status).toBe(201);
  });

  it("pages the list newest first", async () => {
    const merchant = await seedMerchant(server, "Paging Merchant");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await createEndpoint(server, merchant.secret, { url: `https://example.com/${i}`, event_types: ["*"] })).id);
    const first = await (await get(merchant.secret, "/v1/webhook_endpoints?limit=2")).json();
    expect(first.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
    expect(first.has_more).toBe(true);
    const second = await (await get(merchant.secret, `/v1/webhook_endpoints?limit=2&starting_after=${ids[1]}`)).json();
    expect(second.data.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
    expect(second.has_more).toBe(false);
  });

  it("rotates the secret, and no secret is ever stored in plaintext or logged", async () => {
    const endpoint = await createEndpoint(server, m.secret, { url: "https://example.com/rot", event_types: ["*"] });
    const res = await server.request(`/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, { method: "POST", headers: auth(m.secret), json: {} });
    expect(res.status).toBe(200);
    const rotated = await res.json();
    expect(rotated.id).toBe(endpoint.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(endpoint.secret);

    const secrets = [endpoint.secret, rotated.secret];
    const contents = (await storedData(server.dataDir)) + server.readLog();
    expectStored(contents, endpoint.id, "https://example.com/rot");
    for (const secret of secrets) {
      expect(contents).not.toContain(secret);
      expect(contents).not.toContain(secret.slice("whsec_".length));
    }
  });
});
