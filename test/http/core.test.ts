import { renameSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, route, type Route } from "../../server/http/route";
import { allRoutes } from "../../server/server";
import type { AppContext } from "../../server/app-context";
import { bootServer, TEST_ENGINE, type TestServer } from "../support/harness";
import { expectError } from "../support/errors";

/** Routes only these tests mount, to reach the body parser and a slow handler. */
function probeRoutes(app: AppContext): Route[] {
  return [
    ...allRoutes(app),
    route({ method: "PUT", path: "/probe/echo", scope: null, idempotent: false, summary: "probe", responses: {}, handle: async (req) => req.body, present: (b) => json(200, b) }),
    route({
      method: "GET",
      path: "/probe/slow",
      scope: null,
      summary: "probe",
      responses: {},
      handle: () => new Promise((resolve) => setTimeout(() => resolve({ finished: true }), 700)),
      present: (b) => json(200, b),
    }),
    route({
      method: "GET",
      path: "/probe/crash",
      scope: null,
      summary: "probe",
      responses: {},
      handle: async () => {
        throw new Error("secret internals at /srv/paygate/db.ts:42");
      },
      present: (b) => json(200, b),
    }),
  ];
}

describe("HTTP core", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await bootServer({ routes: probeRoutes });
  });
  afterAll(() => server.stop());

  it("serves /health with status, service, version and the Node version", async () => {
    const res = await server.request("/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok", service: "paygate", version: expect.stringMatching(/^\d+\.\d+\.\d+/), node: process.version });
  });

  it("echoes an acceptable X-Request-Id and generates one otherwise", async () => {
    const echoed = await server.request("/health", { headers: { "x-request-id": "trace-123" } });
    expect(echoed.headers.get("x-request-id")).toBe("trace-123");
    const generated = await server.request("/health");
    expect(generated.headers.get("x-request-id")).toMatch(/^req_[a-z0-9]{20}$/);
    const tooLong = await server.request("/health", { headers: { "x-request-id": "x".repeat(201) } });
    expect(tooLong.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("answers unknown routes with 404 resource_not_found in the envelope", async () => {
    const res = await server.request("/v1/nothing-here", { headers: { "x-request-id": "r-404" } });
    expect(res.status).toBe(404);
    expect(res.headers.get("x-request-id")).toBe("r-404");
    expect(await res.json()).toEqual({
      error: { type: "invalid_request_error", code: "resource_not_found", message: expect.any(String), request_id: "r-404" },
    });
  });

  it("answers a wrong method with 405 method_not_allowed and Allow", async () => {
    const res = await server.request("/health", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET");
    const body = await res.json();
    expect(body.error.code).toBe("method_not_allowed");
    expect(body.error.request_id).toBe(res.headers.get("x-request-id"));
  });

  it("refuses malformed JSON with 400 invalid_json", async () => {
    const res = await server.request("/probe/echo", { method: "PUT", body: "{not json", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ type: "invalid_request_error", code: "invalid_json" });
  });

  it("refuses a JSON body that is not an object with parameter_invalid", async () => {
    const res = await server.request("/probe/echo", { method: "PUT", json: [1, 2] });
    expect(res.status).toBe(400);
    expect((await res.json()).error.code).toBe("parameter_invalid");
  });

  it("refuses bodies over 1 MiB with 413 payload_too_large, declared or streamed", async () => {
    const big = JSON.stringify({ pad: "x".repeat(1024 * 1024) });
    const declared = await server.request("/probe/echo", { method: "PUT", body: big, headers: { "content-type": "application/json" } });
    expect(declared.status).toBe(413);
    expect((await declared.json()).error).toMatchObject({ type: "invalid_request_error", code: "payload_too_large" });
    const stream = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode("x".repeat(64 * 1024)));
        controller.close();
      },
    });
    const chunked = await server.request("/probe/echo", { method: "PUT", body: stream, headers: { "content-type": "application/json" }, duplex: "half" } as RequestInit);
    await expectError(chunked, 413, "payload_too_large");
  });

  it("accepts a body just under the limit", async () => {
    const body = { pad: "x".repeat(1024 * 1024 - 20) };
    const res = await server.request("/probe/echo", { method: "PUT", json: body });
    expect(res.status).toBe(200);
  });

  it("turns an unexpected exception into 500 api_error without internals", async () => {
    const res = await server.request("/probe/crash");
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(JSON.parse(text).error).toMatchObject({ type: "api_error", code: "api_error" });
    expect(text).not.toContain("secret internals");
    expect(text).not.toContain("db.ts");
    expect(server.readLog()).toContain("secret internals");
  });

  it("logs one line per request with request id, method, route, status and duration", async () => {
    await server.request("/health/ready", { headers: { "x-request-id": "log-line-check" } });
    const line = server
      .readLog()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.request_id === "log-line-check");
    expect(line).toMatchObject({ method: "GET", route: "/health/ready", status: 200, duration_ms: expect.any(Number) });
  });

  it("never logs a bearer token sent with a request", async () => {
    const token = "sk_test_LOGLEAKCHECK0123456789abcdef";
    await server.request("/health", { headers: { authorization: `Bearer ${token}` } });
    await server.request("/v1/unknown", { headers: { authorization: `Bearer ${token}` } });
    await server.request("/probe/echo", { method: "PUT", headers: { authorization: `Bearer ${token}` }, json: { key: token } });
    expect(server.readLog()).not.toContain(token);
  });
});

describe("readiness", () => {
  // The SQLite file; on PostgreSQL, test/store/database-loss.test.ts stops the server instead.
  it.skipIf(TEST_ENGINE !== "sqlite")("answers 200 with each check, then 503 naming the database when its file is gone", async () => {
    const server = await bootServer();
    try {
      const ready = await server.request("/health/ready");
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: "ready", checks: { database: "ok", cache: "ok" } });
      renameSync(join(server.dataDir, "paygate.db"), join(server.dataDir, "moved.db"));
      const degraded = await server.request("/health/ready");
      expect(degraded.status).toBe(503);
      expect(await degraded.json()).toEqual({ status: "degraded", checks: { database: "error", cache: "ok" } });
    } finally {
      await server.stop();
    }
  });
});

describe("graceful shutdown", () => {
  it("finishes an in-flight request, then refuses new connections", async () => {
    const server = await bootServer({ routes: probeRoutes });
    const inFlight = server.request("/probe/slow");
    await new Promise((r) => setTimeout(r, 150));
    const closed = server.close();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ finished: true });
    await closed;
    await expect(fetch(server.url + "/health")).rejects.toThrow();
  });
});
