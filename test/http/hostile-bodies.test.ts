import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allRoutes } from "../../server/server";
import type { Route } from "../../server/http/route";
import { bootServer, type TestServer } from "../support/harness";
import { auth } from "../support/seed";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";

const nested = (depth: number) => `{"a":${"[".repeat(depth)}${"]".repeat(depth)}}`;

/** Bodies a hostile or broken client sends; none may ever produce a 5xx. */
const HOSTILE_BODIES: Array<[string, string]> = [
  ["5,000 levels of arrays", nested(5000)],
  ["100,000 levels of arrays", nested(100_000)],
  ["5,000 levels of objects", `${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`],
  ["a huge array", JSON.stringify({ event_types: Array.from({ length: 100_000 }, () => "*"), metadata: Array(50_000).fill(1) })],
  ["a huge object", JSON.stringify(Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i])))],
  ["long strings", JSON.stringify({ name: "x".repeat(900_000), url: `https://example.com/${"y".repeat(50_000)}`, amount: "9".repeat(5000) })],
  ["lone surrogates", '{"name":"\\ud800","label":"\\udfff x","url":"https://example.com/\\ud800","description":"\\udc00","metadata":{"\\ud800":"\\udfff"}}'],
  ["NUL characters", JSON.stringify({ name: "a\u0000b", label: "\u0000", connector_account: "ca_\u0000", payment_id: "\u0000", credential_ref: "secret://a\u0000b" })],
  ["RTL and emoji", JSON.stringify({ name: "\u202e\u200fشركة 💳🧨", label: "👩‍👩‍👧‍👦", description: "\u202etxt.exe", currency: "💶", reason: "\u2066x\u2069" })],
  ["duplicate keys", '{"name":"a","name":"b","amount":1,"amount":"x","card":{"number":"1","number":"4242424242424242"}}'],
  ["numbers at the edges", '{"amount":1e400,"exp_month":-0,"exp_year":1.7976931348623157e308,"limit":-1e-400,"is_default":1}'],
  ["wrong types everywhere", JSON.stringify({ name: [], url: {}, event_types: "*", card: "4242", metadata: [[["x"]]], connectors: { a: 1 }, scopes: null })],
  ["prototype keys", '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}},"toString":1}'],
];

describe("hostile bodies on every write route", () => {
  let server: TestServer;
  let keys: { secret: string; admin: string };
  let params: Record<string, string>;
  let writes: Route[];

  beforeAll(async () => {
    server = await bootServer();
    const m = await seedSandboxMerchant(server, "Hostile");
    keys = { secret: m.secret, admin: m.admin };
    const client = paymentsClient(server, m.secret);
    const sale = await (await client.sale({ amount: 1000, gateway_token: await client.token() })).json();
    const endpoint = await (await client.post("/v1/webhook_endpoints", { url: "http://127.0.0.1:9/h", event_types: ["*"] })).json();
    const spare = await (await client.post("/v1/api-keys", { name: "spare" })).json();
    const events = await (await server.request("/v1/events", { headers: auth(m.secret) })).json();
    params = {
      id: endpoint.id,
      keyId: spare.id,
      merchantId: m.merchant.short_id,
      caid: m.accountShortId,
    };
    // Routes with an `:id` of another resource get that resource's id.
    writes = allRoutes(server.app).filter((r) => r.method !== "GET");
    params.eventId = events.data[0].id;
    params.paymentId = sale.id;
  });
  afterAll(() => server.stop());

  const pathOf = (r: Route) =>
    r.path.replace(/:(\w+)/g, (_, name: string) => (name === "id" && r.path.startsWith("/v1/events") ? params.eventId : params[name]) as string);

  it("refuses a __proto__ key anywhere in a body, spelled or escaped, naming its parent", async () => {
    const client = paymentsClient(server, keys.secret);
    const token = await client.token();
    const sale = (metadata: string) =>
      server.request("/v1/payments/sale", {
        method: "POST",
        headers: { ...auth(keys.secret), "content-type": "application/json", "idempotency-key": `proto-${Math.random()}` },
        body: `{"amount":100,"currency":"usd","gateway_token":"${token}","metadata":${metadata}}`,
      });
    for (const metadata of ['{"__proto__":{"admin":true}}', '{"a":"1","__proto__":"x"}', '{"\\u005f_proto__":"x"}']) {
      const res = await sale(metadata);
      expect(res.status, metadata).toBe(400);
      expect((await res.json()).error).toMatchObject({ type: "invalid_request_error", code: "parameter_invalid", param: "metadata" });
    }
    const top = await server.request("/v1/webhook_endpoints", {
      method: "POST",
      headers: { ...auth(keys.secret), "content-type": "application/json", "idempotency-key": "proto-top" },
      body: '{"__proto__":{"url":"http://127.0.0.1:9/x"},"url":"http://127.0.0.1:9/h","event_types":["*"]}',
    });
    expect(top.status).toBe(400);
    expect((await top.json()).error.message).toMatch(/request body holds the key "__proto__"/);
    // The same characters as a value, or inside a longer key, are ordinary text.
    const fine = await sale('{"note":"__proto__","__proto__x":"y"}');
    expect(fine.status).toBe(201);
    expect((await fine.json()).metadata).toEqual({ note: "__proto__", __proto__x: "y" });
  });

  it("covers the write routes", () => {
    expect(writes.length).toBeGreaterThanOrEqual(15);
  });

  it("refuses a body nested deeper than 32 levels with 400 parameter_invalid, before validation", async () => {
    const post = (body: string) =>
      server.request("/admin/merchants", { method: "POST", headers: { ...auth(keys.admin), "content-type": "application/json" }, body });
    const deepest = await post(nested(31));
    expect((await deepest.json()).error).toMatchObject({ code: "parameter_unknown", param: "a" });
    const tooDeep = await post(nested(32));
    expect(tooDeep.status).toBe(400);
    expect((await tooDeep.json()).error).toMatchObject({ type: "invalid_request_error", code: "parameter_invalid", message: expect.stringMatching(/nested deeper than 32/) });
  });

  for (const [name, body] of HOSTILE_BODIES) {
    it(`answers ${name} with a 4xx envelope whose request_id is X-Request-Id`, async () => {
      for (const r of writes) {
        const key = r.scope === "admin" ? keys.admin : keys.secret;
        const requestId = `hostile-${r.method}-${name.length}`;
        const res = await server.request(pathOf(r), {
          method: r.method,
          headers: { ...auth(key), "content-type": "application/json", "x-request-id": requestId },
          body: r.method === "DELETE" ? undefined : body,
        });
        const where = `${r.method} ${r.path}: ${res.status}`;
        expect(res.status, where).toBeLessThan(500);
        expect(res.headers.get("x-request-id"), where).toBe(requestId);
        if (res.status >= 400) {
          const { error } = await res.json();
          expect(error, where).toMatchObject({ type: "invalid_request_error", code: expect.any(String), message: expect.any(String), request_id: requestId });
        } else {
          await res.arrayBuffer();
        }
      }
    });
  }
});

describe("a client that closes the connection mid-body", () => {
  let server: TestServer;
  let secret: string;
  beforeAll(async () => {
    server = await bootServer();
    secret = (await seedSandboxMerchant(server, "Aborts")).secret;
  });
  afterAll(() => server.stop());

  it("is logged as a 400 request_aborted, not as an unhandled error and a 500", async () => {
    const { port } = new URL(server.url);
    const requestId = "aborted-mid-body";
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        socket.write(
          `POST /v1/payments/sale HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${secret}\r\nIdempotency-Key: k1\r\n` +
            `X-Request-Id: ${requestId}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"amount":`,
        );
        setTimeout(() => socket.destroy(), 100);
      });
      socket.on("close", () => resolve());
      socket.on("error", reject);
    });
    let line: string | undefined;
    for (let i = 0; i < 100 && !line; i++) {
      await new Promise((r) => setTimeout(r, 20));
      line = server.readLog().split("\n").find((l) => l.includes(`"request_id":"${requestId}"`) && l.includes('"msg":"request"'));
    }
    expect(line).toContain('"status":400');
    expect(server.readLog()).not.toContain("unhandled error");
  });
});
