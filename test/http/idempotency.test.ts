import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fingerprint } from "../../server/http/idempotency";
import { claimIdempotencyKey, completeIdempotencyKey } from "../../store/idempotency";
import { migrate } from "../../store/database";
import { openSqliteStore } from "../../store/sqlite-store";
import { bootServer, freshDataDir, type TestServer } from "../support/harness";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { expectError } from "../support/errors";

describe("idempotency over HTTP", () => {
  let server: TestServer;
  let m: SeededMerchant;
  beforeAll(async () => {
    server = await bootServer();
    m = await seedMerchant(server);
  });
  afterAll(() => server.stop());

  const createMerchant = (key: string, idem: string, name: string, extra: Record<string, string> = {}) =>
    server.request("/admin/merchants", { method: "POST", headers: { ...auth(key, idem), ...extra }, json: { name } });

  it("requires the header on POST writes", async () => {
    const res = await server.request("/admin/merchants", { method: "POST", headers: { authorization: `Bearer ${m.admin}` }, json: { name: "x" } });
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatchObject({ type: "invalid_request_error", code: "missing_idempotency_key" });
    const tooLong = await createMerchant(m.admin, "k".repeat(256), "x");
    expect((await tooLong.json()).error).toMatchObject({ code: "parameter_invalid", param: "Idempotency-Key" });
  });

  it("replays the same key and body byte for byte, and marks the replay", async () => {
    const first = await createMerchant(m.admin, "same-1", "Replay Shop");
    const firstBody = await first.text();
    const second = await createMerchant(m.admin, "same-1", "Replay Shop");
    expect(second.status).toBe(first.status);
    expect(await second.text()).toBe(firstBody);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
  });

  it("replays under the original request id: a kept error's body and X-Request-Id agree", async () => {
    const rotate = (requestId: string) =>
      server.request("/v1/api-keys/key_doesnotexist00000000/rotate", { method: "POST", headers: { ...auth(m.secret, "replayed-error-1"), "x-request-id": requestId } });
    const first = await rotate("original-request");
    expect(first.status).toBe(404);
    expect((await first.json()).error).toMatchObject({ code: "api_key_not_found", request_id: "original-request" });
    const replay = await rotate("retry-request");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect((await replay.json()).error.request_id).toBe("original-request");
    expect(replay.headers.get("x-request-id")).toBe("original-request");

    const created = await createMerchant(m.admin, "replayed-success-1", "Request ids", { "x-request-id": "created-here" });
    const again = await createMerchant(m.admin, "replayed-success-1", "Request ids", { "x-request-id": "asked-again" });
    expect(again.headers.get("x-request-id")).toBe(created.headers.get("x-request-id"));
  });

  it("treats the same body with other whitespace as the same request", async () => {
    const a = await server.request("/admin/merchants", { method: "POST", headers: auth(m.admin, "ws-1"), body: '{"name":"k"}' });
    const b = await server.request("/admin/merchants", { method: "POST", headers: auth(m.admin, "ws-1"), body: '{ "name" : "k" }' });
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(await b.text()).toBe(await a.text());
  });

  it("replays a key creation without its plaintext, which is never stored", async () => {
    const first = await (await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret, "key-replay-1"), json: { name: "once" } })).json();
    expect(first.key).toMatch(/^sk_test_/);
    const replay = await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret, "key-replay-1"), json: { name: "once" } });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const body = await replay.json();
    expect(body).toMatchObject({ id: first.id, name: "once", last4: first.last4 });
    expect(body).not.toHaveProperty("key");
  });

  it("answers 422 idempotency_param_mismatch for the same key with another body", async () => {
    await createMerchant(m.admin, "mismatch-1", "One");
    const res = await createMerchant(m.admin, "mismatch-1", "Two");
    expect(res.status).toBe(422);
    expect((await res.json()).error).toMatchObject({ type: "invalid_request_error", code: "idempotency_param_mismatch" });
  });

  it("does not store a 400 validation error: the key can be retried with a fixed body", async () => {
    const bad = await server.request("/admin/merchants", { method: "POST", headers: auth(m.admin, "fixable-1"), json: { name: "" } });
    await expectError(bad, 400, "parameter_invalid");
    const good = await createMerchant(m.admin, "fixable-1", "Fixed");
    expect(good.status).toBe(201);
    expect(good.headers.get("idempotent-replayed")).toBeNull();
  });

  it("scopes keys to the API key: two API keys never collide", async () => {
    const other = await seedMerchant(server, "Other admin");
    const a = await (await createMerchant(m.admin, "shared-1", "Same name")).json();
    const b = await (await createMerchant(other.admin, "shared-1", "Same name")).json();
    expect(a.id).not.toBe(b.id);
  });

  it("runs 50 concurrent requests with one key exactly once", async () => {
    const before = (await (await server.request("/admin/merchants?limit=100", { headers: auth(m.admin) })).json()).data.length;
    const responses = await Promise.all(Array.from({ length: 50 }, () => createMerchant(m.admin, "race-1", "Racer")));
    const bodies = await Promise.all(responses.map((r) => r.json()));
    const created = responses.filter((r) => r.status === 201);
    const conflicts = responses.filter((r) => r.status === 409);
    expect(created.length + conflicts.length).toBe(50);
    expect(created.length).toBeGreaterThanOrEqual(1);
    const ids = new Set(bodies.filter((b) => b.id).map((b) => b.id));
    expect(ids.size).toBe(1);
    for (const body of bodies.filter((b) => b.error)) expect(body.error.code).toBe("idempotency_conflict");
    const after = (await (await server.request("/admin/merchants?limit=100", { headers: auth(m.admin) })).json()).data.length;
    expect(after - before).toBe(1);
  });
});

describe("idempotency across a restart", () => {
  it("replays a stored answer after the server restarts on the same data dir", async () => {
    const dataDir = freshDataDir();
    const first = await bootServer({ dataDir });
    const m = await seedMerchant(first);
    const original = await first.request("/admin/merchants", { method: "POST", headers: auth(m.admin, "restart-1"), json: { name: "Durable" } });
    const body = await original.text();
    await first.close();
    const second = await bootServer({ dataDir });
    try {
      const replay = await second.request("/admin/merchants", { method: "POST", headers: auth(m.admin, "restart-1"), json: { name: "Durable" } });
      expect(replay.status).toBe(201);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(await replay.text()).toBe(body);
    } finally {
      await second.stop();
    }
  });
});

describe("request fingerprint", () => {
  const key = Buffer.alloc(32, 1);
  it("ignores key order at every depth and includes the X-Connector-Account header", () => {
    const a = fingerprint(key, "POST", "/v1/p", { a: 1, b: { c: [1, { d: 2, e: 3 }] } }, null);
    const b = fingerprint(key, "POST", "/v1/p", { b: { c: [1, { e: 3, d: 2 }] }, a: 1 }, null);
    expect(a).toBe(b);
    expect(fingerprint(key, "POST", "/v1/p", { a: 1, b: { c: [{ d: 2, e: 3 }, 1] } }, null)).not.toBe(a);
    expect(fingerprint(key, "POST", "/v1/p", { a: 1, b: { c: [1, { d: 2, e: 3 }] } }, "ca_0123456789")).not.toBe(a);
    expect(fingerprint(key, "POST", "/v1/q", { a: 1, b: { c: [1, { d: 2, e: 3 }] } }, null)).not.toBe(a);
    expect(fingerprint(Buffer.alloc(32, 2), "POST", "/v1/p", { a: 1, b: { c: [1, { d: 2, e: 3 }] } }, null), "another key, another fingerprint").not.toBe(a);
  });
});

describe("idempotency lock rules (store)", () => {
  const scope = { apiKeyId: "key_a", method: "POST", path: "/v1/x", key: "k1" };
  const HOUR = 3_600_000;

  it("refuses an in-flight key, takes over one abandoned for 60 s, and forgets expired ones", async () => {
    const store = openSqliteStore(freshDataDir());
    await migrate(store.db);
    try {
      const t0 = 1_000_000;
      expect(await claimIdempotencyKey(store.db, scope, "fp", t0, 72 * HOUR, 60_000)).toEqual({ kind: "acquired", lockedAt: t0 });
      expect((await claimIdempotencyKey(store.db, scope, "fp", t0 + 59_000, 72 * HOUR, 60_000)).kind).toBe("in_flight");
      expect((await claimIdempotencyKey(store.db, scope, "other", t0 + 59_000, 72 * HOUR, 60_000)).kind).toBe("mismatch");
      const taken = await claimIdempotencyKey(store.db, scope, "fp", t0 + 60_000, 72 * HOUR, 60_000);
      expect(taken).toEqual({ kind: "acquired", lockedAt: t0 + 60_000 });
      // The dead request's late completion must not overwrite the new holder's lock.
      expect(await completeIdempotencyKey(store.db, scope, t0, { status: 201, headers: {}, body: "late" })).toBe(false);
      expect(await completeIdempotencyKey(store.db, scope, t0 + 60_000, { status: 201, headers: {}, body: "ok" })).toBe(true);
      const replay = await claimIdempotencyKey(store.db, scope, "fp", t0 + HOUR, 72 * HOUR, 60_000);
      expect(replay).toEqual({ kind: "replay", response: { status: 201, headers: {}, body: "ok" } });
      const afterRetention = await claimIdempotencyKey(store.db, scope, "new-body", t0 + 60_000 + 72 * HOUR, 72 * HOUR, 60_000);
      expect(afterRetention.kind).toBe("acquired");
    } finally {
      await store.close();
    }
  });
});
