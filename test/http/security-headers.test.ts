import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, type TestServer } from "../support/harness";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";

describe("security headers", () => {
  let server: TestServer;
  let m: SeededMerchant;
  beforeAll(async () => {
    server = await bootServer();
    m = await seedMerchant(server);
  });
  afterAll(() => server.stop());

  const expectHardened = (res: Response, what: string) => {
    expect(res.headers.get("cache-control"), what).toBe("no-store");
    expect(res.headers.get("x-content-type-options"), what).toBe("nosniff");
  };

  it("every answer carries Cache-Control: no-store and X-Content-Type-Options: nosniff", async () => {
    const headers = auth(m.secret, "hdr-replay");
    const body = { name: "headers" };
    const created = await server.request("/v1/api-keys", { method: "POST", headers, json: body });
    expect(created.status).toBe(201);
    const replayed = await server.request("/v1/api-keys", { method: "POST", headers, json: body });
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    const answers: Array<[string, Response]> = [
      ["health", await server.request("/health")],
      ["readiness", await server.request("/health/ready")],
      ["a success", await server.request("/v1/api-keys", { headers: auth(m.secret) })],
      ["a creation", created],
      ["a replay", replayed],
      ["401", await server.request("/v1/api-keys")],
      ["403", await server.request("/admin/merchants", { headers: auth(m.secret) })],
      ["400", await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: { nope: 1 } })],
      ["404", await server.request("/nowhere")],
      ["405", await server.request("/health", { method: "POST" })],
    ];
    for (const [what, res] of answers) expectHardened(res, what);
    expect(answers.map(([, res]) => res.status)).toEqual([200, 200, 200, 201, 201, 401, 403, 400, 404, 405]);
  });
});
