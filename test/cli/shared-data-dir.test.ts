import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../server/config";
import { putSecret } from "../../server/secrets/secret-store";
import { findApiKey } from "../../store/api-keys";
import { DATABASE_FILE } from "../../store/database";
import { isLockTimeout } from "../../store/db-errors";
import { runCli } from "../support/cli";
import { bootServer, type TestServer } from "../support/harness";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";
import { holdWriteLock, type LockHolder } from "../support/lock-holder";
import { auth, liveSecretKey, seedMerchant } from "../support/seed";
import { startWebhookReceiver, type WebhookReceiver } from "../fakes/webhook-receiver";
import { byOperator } from "../../server/audit/audit-actor";

/**
 * Issue 13 item 1: the CLI and the server share one data dir while a third process keeps
 * taking the write lock. Every write waits for the lock (BEGIN IMMEDIATE + busy timeout)
 * instead of failing with SQLITE_BUSY.
 */
describe("writers on one data dir while another process holds the write lock", () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let holder: LockHolder | undefined;
  beforeAll(async () => {
    server = await bootServer();
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await holder?.stop();
    await server.stop();
    await receiver.close();
  });

  it("every CLI write command and every API write route succeeds: no failure, no 5xx", { timeout: 120_000 }, async () => {
    const m = await seedSandboxMerchant(server);
    const client = paymentsClient(server, m.secret);
    await putSecret(server.app, "busy/api", "nmi-api-key", byOperator());
    const endpoint = await (
      await server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(m.secret), json: { url: receiver.url, event_types: ["*"] } })
    ).json();
    const seedSale = await (await client.sale({ amount: 1000, gateway_token: await client.token() })).json();
    const seedEvent = (await (await server.request(`/v1/events?limit=1`, { headers: auth(m.secret) })).json()).data[0].id as string;
    expect(seedSale.status).toBe("succeeded");

    holder = await holdWriteLock(join(server.dataDir, DATABASE_FILE));
    const failures: string[] = [];
    // A lane stops at its first failure: later steps depend on earlier ones.
    const lane = (steps: () => Promise<void>) => steps().catch((error: Error) => void failures.push(error.message));

    const cli = async (args: string[], input?: string): Promise<string> => {
      const result = await runCli([...args, "--data", server.dataDir, "--json"], { input });
      if (result.code !== 0) throw new Error(`paygate ${args.join(" ")}: exit ${result.code} ${result.stderr.trim()}`);
      return result.stdout;
    };
    const cliLane = async () => {
      const merchant = JSON.parse(await cli(["merchants", "create", "--name", "Busy CLI"]));
      const key = JSON.parse(await cli(["keys", "create", "--merchant", merchant.short_id, "--name", "busy"]));
      await cli(["keys", "rotate", key.id, "--merchant", merchant.short_id]);
      await cli(["keys", "revoke", key.id, "--merchant", merchant.short_id]);
      await cli(["secrets", "put", "busy/cli"], "nmi-cli-key");
      const account = JSON.parse(
        await cli([
          "accounts", "create", "--merchant", merchant.short_id, "--connector", "nmi", "--mode", "live", "--key-kind", "security_key",
          "--label", "cli", "--credential-ref", "secret://busy/cli",
        ]),
      );
      await cli(["accounts", "update", account.short_id, "--merchant", merchant.short_id, "--label", "cli-2", "--default"]);
      await cli(["accounts", "delete", account.short_id, "--merchant", merchant.short_id]);
      await cli(["webhooks", "replay", seedEvent]);
    };

    const call = async (method: string, path: string, expected: number, key: string, json?: unknown): Promise<any> => {
      const res = await server.request(path, { method, headers: auth(key), ...(json === undefined ? {} : { json }) });
      const body = await res.text();
      if (res.status !== expected) throw new Error(`${method} ${path}: ${res.status} ${body}`);
      return body ? JSON.parse(body) : undefined;
    };
    const apiLane = async () => {
      const merchant = await call("POST", "/admin/merchants", 201, m.admin, { name: "Busy API" });
      await call("POST", `/admin/merchants/${merchant.short_id}/api-keys`, 201, m.admin, { name: "busy-admin-made" });
      const key = await call("POST", "/v1/api-keys", 201, m.secret, { name: "busy" });
      await call("POST", `/v1/api-keys/${key.id}/rotate`, 200, m.secret);
      await call("DELETE", `/v1/api-keys/${key.id}`, 200, m.secret);
      const accounts = `/admin/merchants/${m.merchant.short_id}/connector-accounts`;
      const liveAdmin = await liveSecretKey(server, m.merchant.id, "admin");
      const account = await call("POST", accounts, 201, liveAdmin, {
        connector_id: "nmi", mode: "live", key_kind: "security_key", label: "api", credential_ref: "secret://busy/api",
      });
      await call("PATCH", `${accounts}/${account.short_id}`, 200, liveAdmin, { label: "api-2", is_default: true });
      await call("DELETE", `${accounts}/${account.short_id}`, 204, liveAdmin);
      await call("PUT", "/v1/routing", 200, m.secret, { connectors: ["mock"] });
      const { token } = await call("POST", "/v1/tokens", 201, m.publishable, {
        card: { number: "4242424242424242", exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: "123" },
      });
      const authorized = await call("POST", "/v1/payments/authorize", 201, m.secret, { amount: 2500, currency: "usd", gateway_token: token, capture_method: "manual" });
      await call("POST", "/v1/payments/capture", 200, m.secret, { payment_id: authorized.id, amount: 2000 });
      await call("POST", "/v1/payments/refund", 200, m.secret, { payment_id: authorized.id, amount: 500 });
      await call("POST", "/v1/payments/sale", 201, m.secret, { amount: 700, currency: "usd", gateway_token: token });
      const toVoid = await call("POST", "/v1/payments/authorize", 201, m.secret, { amount: 300, currency: "usd", gateway_token: token, capture_method: "manual" });
      await call("POST", "/v1/payments/void", 200, m.secret, { payment_id: toVoid.id });
      await call("PATCH", `/v1/webhook_endpoints/${endpoint.id}`, 200, m.secret, { description: "busy" });
      await call("POST", `/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, 200, m.secret, {});
      await call("POST", `/v1/webhook_endpoints/${endpoint.id}/test`, 200, m.secret, {});
      await call("POST", `/v1/events/${seedEvent}/replay`, 200, m.secret, {});
      const spare = await call("POST", "/v1/webhook_endpoints", 201, m.secret, { url: receiver.url, event_types: ["payment.voided"] });
      await call("DELETE", `/v1/webhook_endpoints/${spare.id}`, 200, m.secret);
    };

    await Promise.all([lane(cliLane), lane(apiLane)]);
    const rounds = holder.rounds();
    await holder.stop();

    expect(failures).toEqual([]);
    // The other process really kept taking the lock while the commands ran.
    expect(rounds).toBeGreaterThan(10);
    // Background writes (last_used_at, webhook deliveries) waited too.
    await server.app.auth.flushLastUsed();
    expect(server.readLog()).not.toMatch(/SQLITE_BUSY|database is locked/);
  });
});

describe("a write lock held longer than PAYGATE_BUSY_TIMEOUT", () => {
  let server: TestServer;
  let holder: LockHolder | undefined;
  beforeAll(async () => {
    server = await bootServer({ env: { PAYGATE_BUSY_TIMEOUT: "100ms" } });
  });
  afterAll(async () => {
    await holder?.stop();
    await server.stop();
  });

  it("is a setting: 5s by default, at most 60s, applied to the store's connection", async () => {
    const { rows } = await sql<{ timeout: number }>`PRAGMA busy_timeout`.execute(server.app.db);
    expect(rows[0]?.timeout).toBe(100);
    expect(loadConfig({}, {}).busyTimeoutMs).toBe(5000);
    expect(loadConfig({}, { PAYGATE_BUSY_TIMEOUT: "250ms" }).busyTimeoutMs).toBe(250);
    expect(() => loadConfig({}, { PAYGATE_BUSY_TIMEOUT: "2m" })).toThrow("invalid PAYGATE_BUSY_TIMEOUT");
    expect(() => loadConfig({}, { PAYGATE_BUSY_TIMEOUT: "soon" })).toThrow("invalid PAYGATE_BUSY_TIMEOUT");
  });

  it("fails a CLI command with one line naming the setting; the server keeps last_used_at for its next flush", { timeout: 60_000 }, async () => {
    const m = await seedMerchant(server);
    expect((await server.request("/v1/api-keys", { headers: auth(m.secret) })).status).toBe(200);
    holder = await holdWriteLock(join(server.dataDir, DATABASE_FILE), 20_000);

    const put = await runCli(["secrets", "put", "busy/late", "--data", server.dataDir], { input: "v", env: { PAYGATE_BUSY_TIMEOUT: "200ms" } });
    expect(put.code).toBe(1);
    expect(put.stderr).toMatch(/^paygate: the database stayed locked by another process .* PAYGATE_BUSY_TIMEOUT/);

    const flush = await server.app.auth.flushLastUsed().then(
      () => expect.fail("the flush should have timed out"),
      (error: unknown) => error,
    );
    expect(isLockTimeout(flush)).toBe(true);
    expect((await server.request("/health/ready")).status).toBe(200);

    await holder.stop();
    await server.app.auth.flushLastUsed();
    expect((await findApiKey(server.app.db, m.merchant.id, m.secretId))?.last_used_at).not.toBeNull();
  });
});
