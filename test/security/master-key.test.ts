import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Cipher } from "../../server/secrets/cipher";
import { bootServer, freshDataDir, TEST_ENGINE, type TestResponse } from "../support/harness";
import { runCli } from "../support/cli";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";
import { auth } from "../support/seed";

const OTHER_KEY = Buffer.alloc(32, 9).toString("base64");

/** Exit 1 and exactly one line on stderr naming `setting`. */
function expectRefused(result: { code: number | null; stderr: string }, setting: string): void {
  expect(result.code, result.stderr).toBe(1);
  const lines = result.stderr.trim().split("\n");
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toContain(setting);
  expect(lines[0]).toMatch(/not the master key the data in .* was encrypted with/);
}

describe("a wrong master key is refused at start", () => {
  it("serve, sandbox and a CLI command exit 1 with one line naming PAYGATE_MASTER_KEY", async () => {
    const data = freshDataDir();
    expect((await runCli(["migrate", "--data", data])).code).toBe(0);
    const created = await runCli(["merchants", "create", "--name", "Acme", "--data", data]);
    expect(created.code, created.stderr).toBe(0);
    const env = { PAYGATE_MASTER_KEY: OTHER_KEY };
    expectRefused(await runCli(["serve", "--port", "0", "--data", data], { env }), "PAYGATE_MASTER_KEY");
    expectRefused(await runCli(["sandbox", "--port", "0", "--data", data], { env }), "PAYGATE_MASTER_KEY");
    expectRefused(await runCli(["merchants", "list", "--data", data], { env }), "PAYGATE_MASTER_KEY");
    const rightKey = await runCli(["merchants", "list", "--data", data]);
    expect(rightKey.code, rightKey.stderr).toBe(0);
    expect(rightKey.stdout).toContain("Acme");
  });

  // master.key files are SQLite's: PostgreSQL requires PAYGATE_MASTER_KEY (test/config/defaults.test.ts).
  it.skipIf(TEST_ENGINE !== "sqlite")("names the data dir's master.key when the key comes from that file", async () => {
    const data = freshDataDir();
    const env = { PAYGATE_MASTER_KEY: "" };
    expect((await runCli(["migrate", "--data", data], { env })).code).toBe(0);
    expect((await runCli(["merchants", "create", "--name", "Acme", "--data", data], { env })).code).toBe(0);
    writeFileSync(join(data, "master.key"), `${OTHER_KEY}\n`);
    expectRefused(await runCli(["keys", "list", "--merchant", "x", "--data", data], { env }), join(data, "master.key"));
  });

  it("a store written before the canary existed gets one, unless its data was encrypted with another key", async () => {
    const data = freshDataDir();
    const first = await bootServer({ dataDir: data });
    const m = await seedSandboxMerchant(first);
    await paymentsClient(first, m.publishable).token();
    await first.app.db.deleteFrom("settings").where("name", "=", "master_key_canary").execute();
    await first.close();

    await expect(bootServer({ dataDir: data, env: { PAYGATE_MASTER_KEY: OTHER_KEY } })).rejects.toThrow(/invalid PAYGATE_MASTER_KEY: it is not the master key/);
    const second = await bootServer({ dataDir: data });
    const canary = await second.app.db.selectFrom("settings").select("value").where("name", "=", "master_key_canary").executeTakeFirst();
    expect(canary?.value).toMatch(/^v1\./);
    await second.close();
    await expect(bootServer({ dataDir: data, env: { PAYGATE_MASTER_KEY: OTHER_KEY } })).rejects.toThrow(/PAYGATE_MASTER_KEY/);
  });
});

describe("a ciphertext that cannot be decrypted at request time", () => {
  it("answers 503 master_key_mismatch, never 500: card token, connector credential, webhook secret", async () => {
    const server = await bootServer();
    try {
      const m = await seedSandboxMerchant(server);
      const client = paymentsClient(server, m.secret);
      const other = new Cipher(Buffer.alloc(32, 9));
      const expectMismatch = async (res: TestResponse, what: string) => {
        const body = await res.json();
        expect(res.status, `${what}: ${JSON.stringify(body)}`).toBe(503);
        expect(body.error, what).toEqual({ type: "api_error", code: "master_key_mismatch", message: expect.stringContaining("master key"), request_id: res.headers.get("x-request-id") });
      };

      const token = await client.token();
      await server.app.db.updateTable("card_tokens").set({ pan_encrypted: other.encrypt("4242424242424242", `pan:${token}`) }).where("token", "=", token).execute();
      await expectMismatch(await client.sale({ amount: 1000, gateway_token: token }), "card token");

      // A merchant that never charged: a running server keeps a credential it has
      // decrypted until a write through the store (or another process) changes it,
      // and this raw update on the server's own connection is neither.
      const fresh = await seedSandboxMerchant(server, "Never charged");
      const freshClient = paymentsClient(server, fresh.secret);
      const good = await freshClient.token();
      const path = `sandbox/${fresh.merchant.short_id}/mock`;
      await server.app.db.updateTable("secrets").set({ ciphertext: other.encrypt("mock", `secret:${path}:1`) }).where("path", "=", path).execute();
      await expectMismatch(await freshClient.sale({ amount: 1000, gateway_token: good }), "connector credential");

      const created = await server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(m.secret), json: { url: "http://127.0.0.1:9/hooks", event_types: ["*"] } });
      const endpoint = await created.json();
      await server.app.db.updateTable("webhook_endpoints").set({ secret_encrypted: other.encrypt("whsec_x", endpoint.id) }).where("id", "=", endpoint.id).execute();
      await expectMismatch(await server.request(`/v1/webhook_endpoints/${endpoint.id}/test`, { method: "POST", headers: auth(m.secret) }), "webhook secret");
      expect(server.readLog()).toContain("stored data cannot be decrypted");
    } finally {
      await server.stop();
    }
  });
});
