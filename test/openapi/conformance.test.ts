import { Validator } from "@seriousme/openapi-schema-validator";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_CARDS } from "../../server/connectors/mock/test-cards";
import { byOperator } from "../../server/audit/audit-actor";
import { openApiPath, operationId } from "../../server/openapi/document";
import { routeTable } from "../../server/openapi/route-table";
import { putSecret } from "../../server/secrets/secret-store";
import { runCli } from "../support/cli";
import { futureExpiry } from "../support/expiry";
import { bootServer, type TestServer } from "../support/harness";
import { CARDS, seedSandboxMerchant } from "../support/payments";
import { auth, liveSecretKey } from "../support/seed";

type Json = Record<string, any>;
type Method = "get" | "post" | "put" | "patch" | "delete";

/** JSON pointer escaping of one reference token. */
const token = (part: string) => part.replaceAll("~", "~0").replaceAll("/", "~1");

/** The `data` of the first `count` server-sent events of `res`, then the connection is dropped. */
async function readStreamItems(res: Response, count: number): Promise<unknown[]> {
  const items: unknown[] = [];
  const decoder = new TextDecoder();
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let buffer = "";
  try {
    while (items.length < count) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const data = buffer.slice(0, end).split("\n").find((line) => line.startsWith("data: "));
        buffer = buffer.slice(end + 2);
        if (data) items.push(JSON.parse(data.slice("data: ".length)));
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return items;
}

describe("the OpenAPI document", () => {
  let server: TestServer;
  let m: Awaited<ReturnType<typeof seedSandboxMerchant>>;
  let doc: Json;
  let ajv: Ajv2020;
  /** `operationId` -> statuses seen from the live server, each validated against the document. */
  const seen = new Map<string, Set<number>>();

  beforeAll(async () => {
    server = await bootServer({ env: { PAYGATE_WEBHOOK_TIMEOUT: "2s" } });
    m = await seedSandboxMerchant(server, "OpenAPI Shop");
    await putSecret(server.app, "acme/mock", "mock-credential", byOperator());
    const res = await server.request("/v1/openapi.json");
    expect(res.status).toBe(200);
    doc = await res.json();
    ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
    addFormats(ajv);
    ajv.addSchema({ ...doc, $id: "urn:paygate:openapi" });
  });
  afterAll(() => server.stop());

  const validatorAt = (pointer: string) => {
    const validate = ajv.getSchema(`urn:paygate:openapi#${pointer}`);
    if (!validate) throw new Error(`no schema at ${pointer}`);
    return validate;
  };

  /**
   * Sends one request and checks the answer against the document: the operation exists,
   * the status is documented for it, and the body matches that status's schema.
   */
  async function call(
    method: Method,
    template: string,
    options: {
      params?: Record<string, string>;
      key?: string | null;
      body?: unknown;
      query?: string;
      idempotencyKey?: string | null;
      headers?: Record<string, string>;
      /** For a stream: how many items to read (and validate) before hanging up. */
      streamItems?: number;
    } = {},
  ): Promise<{ status: number; body: any }> {
    const op = doc.paths[template]?.[method];
    expect(op, `${method.toUpperCase()} ${template} is not in the document`).toBeDefined();
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(options.params?.[name] ?? "missing"));
    const headers: Record<string, string> = {};
    if (options.key !== null) Object.assign(headers, auth(options.key ?? m.secret));
    if (options.idempotencyKey === null) delete headers["idempotency-key"];
    Object.assign(headers, options.headers);
    const res = await server.request(path + (options.query ?? ""), { method: method.toUpperCase(), headers, ...(options.body !== undefined && { json: options.body }) });
    const mediaType = (res.headers.get("content-type") ?? "").split(";")[0] as string;
    const documented = op.responses[String(res.status)];
    if (mediaType !== "application/json" && mediaType !== "") {
      const where = `${method.toUpperCase()} ${path} answered ${res.status} ${mediaType}`;
      expect(documented?.content?.[mediaType], `${where}: not documented`).toBeDefined();
      const items = await readStreamItems(res, options.streamItems ?? 1);
      expect(items.length, `${where}: fewer items than asked for`).toBeGreaterThanOrEqual(options.streamItems ?? 1);
      const validate = validatorAt(`/paths/${token(template)}/${method}/responses/${res.status}/content/${token(mediaType)}/x-itemSchema`);
      for (const item of items) expect(validate(item), `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
      const statuses = seen.get(op.operationId) ?? new Set<number>();
      seen.set(op.operationId, statuses.add(res.status));
      return { status: res.status, body: items };
    }
    const text = await res.text();
    const where = `${method.toUpperCase()} ${path} answered ${res.status} ${text.slice(0, 300)}`;
    expect(documented, `${where}: status not documented`).toBeDefined();
    const pointer = `/paths/${token(template)}/${method}/responses/${res.status}/content/application~1json/schema`;
    const body = text === "" ? undefined : JSON.parse(text);
    if (documented.content) {
      const validate = validatorAt(pointer);
      expect(validate(body), `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    } else {
      expect(text, `${where}: documented without a body`).toBe("");
    }
    if (res.status < 300 && options.body !== undefined) {
      const validate = validatorAt(`/paths/${token(template)}/${method}/requestBody/content/application~1json/schema`);
      expect(validate(options.body), `${where}: the request body sent does not match the documented one: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
    const statuses = seen.get(op.operationId) ?? new Set<number>();
    statuses.add(res.status);
    seen.set(op.operationId, statuses);
    return { status: res.status, body };
  }

  it("is a valid OpenAPI 3.1 document", async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toMatch(/^3\.1\./);
  });

  it("lists every test card and what the mock connector does with it", () => {
    const description = (doc.info as { description: string }).description;
    for (const card of TEST_CARDS) expect(description).toContain(`| ${card.number} | ${card.outcome} |`);
  });

  it("documents every route of the route table, and nothing else", () => {
    const routes = routeTable();
    const documented = Object.entries(doc.paths as Record<string, Json>).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`));
    expect(documented.sort()).toEqual(routes.map((r) => `${r.method} ${openApiPath(r.path)}`).sort());
    for (const route of routes) expect(doc.paths[openApiPath(route.path)][route.method.toLowerCase()].operationId).toBe(operationId(route));
  });

  it("declares the auth scheme, the public routes and the Idempotency-Key header", () => {
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.security).toEqual([{ apiKey: [] }]);
    for (const path of ["/health", "/health/ready", "/v1/openapi.json"]) expect(doc.paths[path].get.security).toEqual([]);
    expect(doc.paths["/v1/payments"].get.security).toBeUndefined();
    expect(doc.paths["/v1/payments"].get["x-paygate-scope"]).toBe("payments:read");
    const idempotency = { $ref: "#/components/parameters/IdempotencyKey" };
    expect(doc.paths["/v1/payments/capture"].post.parameters).toContainEqual(idempotency);
    expect(doc.paths["/admin/merchants/{merchantId}/connector-accounts/{caid}"].patch.parameters).toContainEqual(idempotency);
    expect(doc.paths["/v1/routing"].put.parameters ?? []).not.toContainEqual(idempotency);
    expect(doc.paths["/v1/payments/sale"].post.parameters).toContainEqual(expect.objectContaining({ name: "X-Connector-Account", in: "header", required: false }));
    expect(doc.paths["/v1/test_data/reset"].post.parameters).toContainEqual(idempotency);
  });

  it("documents the event stream as server-sent events of the Event schema", () => {
    const stream = doc.paths["/v1/events/stream"].get;
    expect(Object.keys(stream.responses["200"].content)).toEqual(["text/event-stream"]);
    expect(stream.responses["200"].content["text/event-stream"]["x-itemSchema"]).toEqual({ $ref: "#/components/schemas/Event" });
    expect(stream.parameters).toContainEqual(expect.objectContaining({ name: "types", in: "query", required: false, schema: expect.objectContaining({ type: "string" }) }));
    expect(stream.parameters).toContainEqual(expect.objectContaining({ name: "Last-Event-ID", in: "header", required: false }));
  });

  it("is what `paygate openapi` prints", async () => {
    const cli = await runCli(["openapi"]);
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual(doc);
  });

  it("points the unknown-path error at the document", async () => {
    const res = await server.request("/v1/nothing-here");
    expect(res.status).toBe(404);
    expect((await res.json()).error.message).toContain("/v1/openapi.json");
  });

  it("matches every answer of every operation against a live server", async () => {
    const admin = m.admin;
    const merchantId = m.merchant.short_id;

    expect((await call("get", "/health", { key: null })).status).toBe(200);
    expect((await call("get", "/health/ready", { key: null })).status).toBe(200);
    expect((await call("get", "/v1/openapi.json", { key: null })).status).toBe(200);

    // Admin: merchants, their keys and connector accounts.
    const merchant = (await call("post", "/admin/merchants", { key: admin, body: { name: "Documented Merchant" } })).body;
    expect((await call("get", "/admin/merchants", { key: admin, query: "?limit=2" })).status).toBe(200);
    expect((await call("get", "/admin/merchants/{merchantId}", { key: admin, params: { merchantId: merchant.short_id } })).status).toBe(200);
    expect((await call("get", "/admin/merchants/{merchantId}", { key: admin, params: { merchantId: "mrc_nope" } })).status).toBe(404);
    expect((await call("post", "/admin/merchants/{merchantId}/api-keys", { key: admin, params: { merchantId: merchant.short_id }, body: { name: "ops" } })).status).toBe(201);
    const accounts = "/admin/merchants/{merchantId}/connector-accounts";
    const account = (
      await call("post", accounts, {
        key: admin,
        params: { merchantId },
        body: { connector_id: "mock", mode: "test", key_kind: "api_key", label: "documented", credential_ref: "secret://acme/mock" },
      })
    ).body;
    expect(account.object).toBe("connector_account");
    expect((await call("get", accounts, { key: admin, params: { merchantId }, query: "?include_inactive=true" })).status).toBe(200);
    const one = { key: admin, params: { merchantId, caid: account.short_id } };
    expect((await call("get", `${accounts}/{caid}`, one)).status).toBe(200);
    expect((await call("patch", `${accounts}/{caid}`, { ...one, body: { label: "documented-2" } })).status).toBe(200);
    expect((await call("patch", `${accounts}/{caid}`, { ...one, body: { is_active: false } })).status).toBe(400);
    expect((await call("delete", `${accounts}/{caid}`, one)).status).toBe(204);
    expect((await call("get", `${accounts}/{caid}`, { ...one, params: { merchantId, caid: "ca_nope" } })).status).toBe(404);

    // The merchant's own keys.
    const key = (await call("post", "/v1/api-keys", { body: { name: "ci", scopes: ["payments:read"] } })).body;
    expect(key.key).toMatch(/^sk_test_/);
    expect((await call("get", "/v1/api-keys")).status).toBe(200);
    expect((await call("post", "/v1/api-keys/{keyId}/rotate", { params: { keyId: key.id }, body: {} })).status).toBe(200);
    expect((await call("delete", "/v1/api-keys/{keyId}", { params: { keyId: key.id } })).status).toBe(200);
    expect((await call("post", "/v1/api-keys/{keyId}/rotate", { params: { keyId: key.id }, body: {} })).status).toBe(409);
    expect((await call("get", "/v1/api-keys", { key: "sk_test_notakey" })).status).toBe(401);
    expect((await call("get", "/v1/api-keys", { key: m.publishable })).status).toBe(403);

    // Routing, tokens and payments.
    expect((await call("get", "/v1/routing")).status).toBe(200);
    expect((await call("put", "/v1/routing", { body: { connectors: ["mock"] } })).status).toBe(200);
    const tokenize = (number: string) => call("post", "/v1/tokens", { key: m.publishable, body: { card: { number, ...futureExpiry(), cvc: "123" } } });
    expect((await tokenize("4111111111111112")).status).toBe(400);
    const token = async (number: string = CARDS.approved) => (await tokenize(number)).body.token as string;
    const authorized = (await call("post", "/v1/payments/authorize", { body: { amount: 1000, currency: "usd", capture_method: "manual", gateway_token: await token(), metadata: { order: "1" } } })).body;
    expect(authorized.status).toBe("authorized");
    expect((await call("post", "/v1/payments/capture", { body: { payment_id: authorized.id, amount: 800 } })).status).toBe(200);
    expect((await call("post", "/v1/payments/refund", { body: { payment_id: authorized.id, amount: 300, reason: "requested" } })).status).toBe(200);
    expect((await call("post", "/v1/payments/void", { body: { payment_id: authorized.id } })).status).toBe(409);
    const toVoid = (await call("post", "/v1/payments/authorize", { body: { amount: 500, currency: "usd", capture_method: "manual", gateway_token: await token() } })).body;
    expect((await call("post", "/v1/payments/void", { body: { payment_id: toVoid.id } })).status).toBe(200);
    expect((await call("post", "/v1/payments/refund", { body: { payment_id: authorized.id, amount: 100 }, headers: { "x-connector-account": "not-an-account" } })).body.error.code).toBe("invalid_connector_account");
    const viaHeader = { "x-connector-account": m.accountShortId };
    expect((await call("post", "/v1/payments/sale", { body: { amount: 700, currency: "usd", gateway_token: await token() }, headers: viaHeader })).status).toBe(201);
    expect((await call("post", "/v1/payments/sale", { body: { amount: 700, currency: "usd", gateway_token: await token(CARDS.generic_decline) } })).status).toBe(502);
    expect((await call("post", "/v1/payments/sale", { body: { amount: 700, currency: "usd", gateway_token: "tok_test_nope" } })).status).toBe(404);
    expect((await call("post", "/v1/payments/refund", { body: { payment_id: authorized.id, amount: 99_999 } })).status).toBe(400);
    expect((await call("get", "/v1/payments/{id}", { params: { id: authorized.id } })).status).toBe(200);
    expect((await call("get", "/v1/payments/{id}", { params: { id: "pay_nope" } })).status).toBe(404);
    expect((await call("get", "/v1/payments", { query: "?limit=2&status=succeeded" })).status).toBe(200);
    expect((await call("get", "/v1/payments", { query: "?limit=1000" })).status).toBe(400);

    // Webhook endpoints and events.
    const endpoint = (await call("post", "/v1/webhook_endpoints", { body: { url: "https://example.com/hooks", event_types: ["*"], description: "docs" } })).body;
    expect(endpoint.secret).toMatch(/^whsec_/);
    const byId = { params: { id: endpoint.id } };
    expect((await call("get", "/v1/webhook_endpoints")).status).toBe(200);
    expect((await call("get", "/v1/webhook_endpoints/{id}", byId)).status).toBe(200);
    expect((await call("patch", "/v1/webhook_endpoints/{id}", { ...byId, body: { description: null, status: "disabled" } })).status).toBe(200);
    expect((await call("post", "/v1/webhook_endpoints/{id}/rotate_secret", { ...byId, body: {} })).status).toBe(200);
    expect((await call("post", "/v1/webhook_endpoints/{id}/test", { ...byId, body: { event_type: "payment.captured" } })).status).toBe(200);
    const events = (await call("get", "/v1/events", { query: "?type=payment.captured" })).body;
    expect(events.data.length).toBeGreaterThan(0);
    const eventId = { params: { id: events.data[0].id } };
    expect((await call("get", "/v1/events/{id}", eventId)).status).toBe(200);
    expect((await call("post", "/v1/events/{id}/replay", { ...eventId, body: {} })).status).toBe(200);
    expect((await call("get", "/v1/events/{id}", { params: { id: "evt_nope" } })).status).toBe(404);
    expect((await call("delete", "/v1/webhook_endpoints/{id}", byId)).status).toBe(200);
    expect((await call("get", "/v1/webhook_endpoints/{id}", byId)).status).toBe(404);

    // The event stream: resumed after the oldest event listed, it sends the ones after it at once.
    const oldest = (await call("get", "/v1/events", { query: "?limit=100" })).body.data.at(-1).id as string;
    const streamed = (await call("get", "/v1/events/stream", { headers: { "last-event-id": oldest }, streamItems: 2 })).body;
    expect(streamed.map((event: Json) => event.id)).not.toContain(oldest);
    expect((await call("get", "/v1/events/stream", { query: "?types=payment.nope" })).status).toBe(400);
    expect((await call("get", "/v1/events/stream", { headers: { "last-event-id": "not-an-event" } })).status).toBe(400);

    // The audit log of what the admin and merchant keys did above.
    const audit = (await call("get", "/admin/audit", { key: admin, query: `?limit=3&merchant=${merchantId}&since=2020-01-01T00:00:00Z` })).body;
    expect(audit.data.length).toBe(3);
    expect((await call("get", "/admin/audit", { key: admin, query: `?starting_after=${audit.data[2].id}` })).status).toBe(200);
    expect((await call("get", "/admin/audit", { key: admin, query: "?merchant=mrc_nope" })).status).toBe(404);
    expect((await call("get", "/admin/audit", { key: admin, query: "?since=yesterday" })).status).toBe(400);
    expect((await call("get", "/admin/audit", { query: "?limit=1" })).status).toBe(403);

    // Reset last: it deletes the merchant's test data the steps above made.
    expect((await call("post", "/v1/test_data/reset", { key: await liveSecretKey(server, m.merchant.id), body: {} })).status).toBe(403);
    const reset = (await call("post", "/v1/test_data/reset", { body: {} })).body;
    expect(reset.deleted.payments).toBeGreaterThan(0);

    // What every operation shares: no key, and a body or an Idempotency-Key the pipeline refuses.
    for (const [template, ops] of Object.entries(doc.paths as Record<string, Record<Method, Json>>)) {
      for (const [method, op] of Object.entries(ops) as Array<[Method, Json]>) {
        const params = { merchantId, caid: "ca_nope", keyId: "key_nope", id: "nope" };
        if (op.security === undefined) expect((await call(method, template, { key: null, params, body: op.requestBody ? {} : undefined })).status).toBe(401);
        const key = template.startsWith("/admin") ? admin : m.secret;
        if (op.requestBody) expect((await call(method, template, { key, params, body: { not_a_field: 1 } })).status).toBe(400);
        if (op.parameters?.some((p: Json) => p.$ref === "#/components/parameters/IdempotencyKey")) {
          expect((await call(method, template, { key, params, idempotencyKey: null, body: op.requestBody ? {} : undefined })).status).toBe(400);
        }
      }
    }

    const unexercised = Object.values(doc.paths as Record<string, Record<string, Json>>)
      .flatMap((ops) => Object.values(ops))
      .filter((op) => ![...(seen.get(op.operationId) ?? [])].some((status) => status < 300))
      .map((op) => op.operationId);
    expect(unexercised, "operations this test never saw succeed: add them to the scenario above").toEqual([]);
  });
});
