import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { putSecret } from "../../server/secrets/secret-store";
import { bootServer, type TestServer } from "../support/harness";
import { auth } from "../support/seed";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";
import { byOperator } from "../../server/audit/audit-actor";

/** Every list of the API: each honours `limit` (1..100) and the `starting_after` cursor. */
describe("lists", () => {
  let server: TestServer;
  let lists: Array<[string, string, string]>;

  beforeAll(async () => {
    server = await bootServer();
    const m = await seedSandboxMerchant(server, "Lists");
    const client = paymentsClient(server, m.secret);
    const token = await client.token();
    const admin = m.admin;
    for (let i = 0; i < 3; i++) {
      await server.request("/admin/merchants", { method: "POST", headers: auth(admin), json: { name: `listed ${i}` } });
      await putSecret(server.app, `lists/mock-${i}`, "mock-credential", byOperator());
      await server.request(`/admin/merchants/${m.merchant.id}/connector-accounts`, {
        method: "POST",
        headers: auth(admin),
        json: { connector_id: "mock", mode: "test", key_kind: "api_key", label: `extra-${i}`, credential_ref: `secret://lists/mock-${i}` },
      });
      await client.post("/v1/webhook_endpoints", { url: `http://127.0.0.1:9/hook-${i}`, event_types: ["payment.failed"] });
      await client.sale({ amount: 100 + i, gateway_token: token, connector_account: m.accountShortId });
    }
    lists = [
      ["admin merchants", "/admin/merchants", admin],
      ["admin connector accounts", `/admin/merchants/${m.merchant.short_id}/connector-accounts`, admin],
      ["webhook endpoints", "/v1/webhook_endpoints", m.secret],
      ["events", "/v1/events", m.secret],
      ["payments", "/v1/payments", m.secret],
    ];
  });
  afterAll(() => server.stop());

  const get = async (path: string, key: string) => {
    const res = await server.request(path, { headers: auth(key) });
    return { status: res.status, body: await res.json() };
  };

  it("walks every list a page at a time, newest first, ending where limit=100 ends", async () => {
    for (const [name, path, key] of lists) {
      const all = await get(`${path}?limit=100`, key);
      expect(all.status, name).toBe(200);
      expect(all.body.data.length, name).toBeGreaterThanOrEqual(3);
      const walked: string[] = [];
      let page = await get(`${path}?limit=1`, key);
      for (;;) {
        expect(page.body.data, name).toHaveLength(1);
        walked.push(page.body.data[0].id);
        if (!page.body.has_more) break;
        page = await get(`${path}?limit=1&starting_after=${encodeURIComponent(page.body.data[0].id)}`, key);
      }
      expect(walked, name).toEqual(all.body.data.map((item: { id: string }) => item.id));
      const createdAt = all.body.data.map((item: { created_at: string | number }) => item.created_at);
      expect(createdAt, name).toEqual([...createdAt].sort().reverse());
    }
  });

  it("refuses a limit outside 1..100 with 400 parameter_invalid on every list", async () => {
    for (const [name, path, key] of lists) {
      for (const limit of ["0", "101", "x"]) {
        const res = await get(`${path}?limit=${limit}`, key);
        expect(res.status, `${name} limit=${limit}`).toBe(400);
        expect(res.body.error, `${name} limit=${limit}`).toMatchObject({ code: "parameter_invalid", param: "limit" });
      }
    }
  });

  it("filters payments by instant, whatever the offset; out-of-range instants are 400 parameter_invalid", async () => {
    const [, path, key] = lists.find(([name]) => name === "payments") as [string, string, string];
    const all = (await get(`${path}?limit=100`, key)).body.data as Array<{ id: string; created_at: string }>;
    const newest = all[0] as { id: string; created_at: string };
    // The newest payment's instant written in another offset: text comparison would get it wrong.
    const shifted = new Date(Date.parse(newest.created_at) + 5 * 3600_000).toISOString().replace(/\.(\d{3})Z$/, ".$1+05:00");
    const upTo = await get(`${path}?limit=100&created_lte=${encodeURIComponent(shifted)}`, key);
    expect(upTo.body.data.map((p: { id: string }) => p.id)).toEqual(all.map((p) => p.id));
    const from = await get(`${path}?limit=100&created_gte=${encodeURIComponent(shifted)}`, key);
    expect(from.body.data.map((p: { id: string }) => p.id)).toEqual(all.filter((p) => p.created_at === newest.created_at).map((p) => p.id));
    const lastSecond = await get(`${path}?limit=100&created_lte=${encodeURIComponent("9999-12-31T23:59:59+01:00")}`, key);
    expect(lastSecond.body.data).toHaveLength(all.length);
    for (const [param, value] of [
      ["created_lte", "9999-12-31T23:59:59-23:59"],
      ["created_gte", "0000-01-01T00:00:00+00:01"],
    ]) {
      const res = await get(`${path}?${param}=${encodeURIComponent(value as string)}`, key);
      expect(res.status, value).toBe(400);
      expect(res.body.error, value).toMatchObject({ type: "invalid_request_error", code: "parameter_invalid", param });
    }
  });
});
