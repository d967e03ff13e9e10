import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../server/keys/api-keys";
import { createMerchant, type Merchant } from "../../server/merchants/merchants";
import { bootServer, type TestServer } from "../support/harness";
import { auth } from "../support/seed";
import { byOperator } from "../../server/audit/audit-actor";

interface Listed {
  id: string;
  mode: string;
  role: string;
  key?: string;
}

/** `GET /v1/api-keys`: the caller's mode, the keys it may manage, paged by `limit` and `starting_after`. */
describe("listing API keys", () => {
  let server: TestServer;
  let merchant: Merchant;
  const ids: Record<string, string> = {};
  const plaintext: Record<string, string> = {};
  beforeAll(async () => {
    server = await bootServer();
    merchant = await createMerchant(server.app.db, "Lister", byOperator());
    const make = async (name: string, type: "secret" | "publishable", mode: "test" | "live", role: "merchant" | "admin", scopes?: ("keys:read" | "keys:write")[]) => {
      const key = await createApiKey(server.app.db, { merchantId: merchant.id, name, type, mode, role, ...(scopes && { scopes }) }, undefined, byOperator());
      ids[name] = key.id;
      plaintext[name] = key.key as string;
    };
    // Newest first: the keys a narrow or merchant key may not see come before the ones it may.
    await make("narrow test", "secret", "test", "merchant", ["keys:read", "keys:write"]);
    for (let i = 0; i < 5; i++) await make(`secret test ${i}`, "secret", "test", "merchant");
    await make("publishable test", "publishable", "test", "merchant");
    await make("secret live", "secret", "live", "merchant");
    await make("admin live", "secret", "live", "admin");
    await make("admin test", "secret", "test", "admin");
  });
  afterAll(() => server.stop());

  async function list(key: string, query = ""): Promise<{ data: Listed[]; has_more: boolean }> {
    const res = await server.request(`/v1/api-keys${query}`, { headers: auth(key) });
    expect(res.status).toBe(200);
    return res.json();
  }

  async function listAll(key: string, limit: number): Promise<Listed[]> {
    const seen: Listed[] = [];
    let query = `?limit=${limit}`;
    for (let pages = 0; pages < 20; pages++) {
      const page = await list(key, query);
      expect(page.data.length).toBeLessThanOrEqual(limit);
      seen.push(...page.data);
      if (!page.has_more) return seen;
      query = `?limit=${limit}&starting_after=${page.data[page.data.length - 1]?.id}`;
    }
    throw new Error("more than 20 pages");
  }

  it("honours limit: ?limit=1 returns one key and has_more", async () => {
    const page = await list(plaintext["admin test"] as string, "?limit=1");
    expect(page.data).toHaveLength(1);
    expect(page.has_more).toBe(true);
  });

  it("defaults to 10 and pages through every key once with starting_after, newest first", async () => {
    const first = await list(plaintext["admin test"] as string);
    expect(first.data).toHaveLength(8);
    expect(first.has_more).toBe(false);
    const paged = await listAll(plaintext["admin test"] as string, 3);
    expect(paged.map((k) => k.id)).toEqual(first.data.map((k) => k.id));
    expect(paged.every((k) => k.key === undefined)).toBe(true);
  });

  it("lists only the caller's mode", async () => {
    const test = await listAll(plaintext["admin test"] as string, 100);
    expect(new Set(test.map((k) => k.mode))).toEqual(new Set(["test"]));
    const live = await listAll(plaintext["admin live"] as string, 100);
    expect(live.map((k) => k.id).sort()).toEqual([ids["admin live"], ids["secret live"]].sort());
  });

  it("shows a key only the keys it may manage, also when paging past hidden ones", async () => {
    const merchantView = await listAll(plaintext["secret test 0"] as string, 2);
    expect(merchantView.map((k) => k.role)).not.toContain("admin");
    expect(merchantView).toHaveLength(7);
    const narrowView = await listAll(plaintext["narrow test"] as string, 1);
    expect(narrowView.map((k) => k.id)).toEqual([ids["narrow test"]]);
  });

  it("refuses a starting_after the caller cannot see, as if it did not exist", async () => {
    for (const hidden of ["admin test", "secret live"]) {
      const res = await server.request(`/v1/api-keys?starting_after=${ids[hidden]}`, { headers: auth(plaintext["secret test 0"] as string) });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatchObject({ code: "parameter_invalid", param: "starting_after", message: `starting_after: no API key ${ids[hidden]}.` });
    }
  });

  it("rejects a limit outside 1..100", async () => {
    for (const limit of ["0", "101", "x"]) {
      const res = await server.request(`/v1/api-keys?limit=${limit}`, { headers: auth(plaintext["admin test"] as string) });
      expect(res.status).toBe(400);
      expect((await res.json()).error).toMatchObject({ code: "parameter_invalid", param: "limit" });
    }
  });
});
