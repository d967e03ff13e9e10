import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineEnv, freshDataDir } from "../support/harness";
import { runCli, startCliServer, type CliServer } from "../support/cli";
import { futureExpiry } from "../support/expiry";
import { startWebhookReceiver, type WebhookReceiver } from "../fakes/webhook-receiver";

/** Runs a command with `--json` on the shared data dir and parses its stdout. */
async function cliJson(args: string[]): Promise<any> {
  const result = await runCli([...args, "--data", data, "--json"]);
  if (result.code !== 0) throw new Error(`${args.join(" ")}: exit ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout);
}

let data: string;
let server: CliServer;
let receiver: WebhookReceiver;
let merchant: string;

async function post(path: string, body: unknown): Promise<any> {
  const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "idempotency-key": `op-${Math.random()}` }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function authorization(amount = 1000): Promise<string> {
  const { token } = await post("/v1/tokens", { card: { number: "4242424242424242", ...futureExpiry(), cvc: "123" } });
  return (await post("/v1/payments/authorize", { amount, currency: "usd", gateway_token: token, capture_method: "manual" })).id;
}

describe("the CLI covers what an operator touches, through the API's services", () => {
  beforeAll(async () => {
    data = freshDataDir();
    receiver = await startWebhookReceiver({ status: 503 });
    server = await startCliServer(["serve", "--dev", "--port", "0", "--data", data], { env: { PAYGATE_WEBHOOK_RETRY_SCHEDULE: "1h" } });
    merchant = (await cliJson(["merchants", "list"])).data[0].id;
  });
  afterAll(async () => {
    await server.stop();
    await receiver.close();
  });

  it("captures, refunds and voids; a retry with the same idempotency key replays instead of acting twice", async () => {
    const id = await authorization();
    const captured = await cliJson(["payments", "capture", id, "--merchant", merchant, "--idempotency-key", "cap-1"]);
    expect(captured.status).toBe("succeeded");
    const refund = ["payments", "refund", id, "--merchant", merchant, "--amount", "300", "--idempotency-key", "ref-1"];
    expect((await cliJson(refund)).amount_refunded).toBe(300);
    const retried = await runCli([...refund, "--data", data, "--json"]);
    expect(retried.code).toBe(0);
    expect(retried.stderr).toContain("replayed");
    expect((await cliJson(["payments", "get", id, "--merchant", merchant])).amount_refunded).toBe(300);
    const fresh = await runCli(["payments", "refund", id, "--merchant", merchant, "--amount", "100", "--data", data]);
    expect(fresh.code).toBe(0);
    expect(fresh.stderr).toMatch(/idempotency key: cli_[0-9a-f]+/);
    expect((await cliJson(["payments", "get", id, "--merchant", merchant])).amount_refunded).toBe(400);

    const other = await authorization();
    expect((await cliJson(["payments", "void", other, "--merchant", merchant])).status).toBe("voided");
    const listed = await cliJson(["payments", "list", "--merchant", merchant, "--limit", "100"]);
    expect(listed.data.map((p: { id: string }) => p.id)).toEqual(expect.arrayContaining([id, other]));
    const wrongMode = await runCli(["payments", "get", id, "--merchant", merchant, "--mode", "live", "--data", data]);
    expect(wrongMode.code).toBe(1);
  });

  it("manages endpoints and routing, and webhooks list shows the last answer and the merchant", async () => {
    const created = await cliJson(["endpoints", "create", "--merchant", merchant, "--url", receiver.url, "--events", "payment.captured"]);
    expect(created.secret).toMatch(/^whsec_/);
    expect((await cliJson(["endpoints", "list", "--merchant", merchant])).data.map((e: { id: string }) => e.id)).toContain(created.id);
    expect((await cliJson(["endpoints", "update", created.id, "--merchant", merchant, "--description", "ops"])).description).toBe("ops");
    const tested = await runCli(["endpoints", "test", created.id, "--merchant", merchant, "--data", data, "--json"]);
    expect(tested.code).toBe(1);
    expect(JSON.parse(tested.stdout).status_code).toBe(503);

    await cliJson(["payments", "capture", await authorization(), "--merchant", merchant]);
    await expect
      .poll(async () => (await cliJson(["webhooks", "list"])).data.find((d: { last_status_code: number | null }) => d.last_status_code === 503), { timeout: 10_000 })
      .toMatchObject({ merchant: expect.stringMatching(/^mrc_/), last_status_code: 503 });

    expect((await cliJson(["routing", "set", "--merchant", merchant, "--connectors", "mock"])).connectors).toEqual(["mock"]);
    expect((await cliJson(["routing", "get", "--merchant", merchant])).connectors).toEqual(["mock"]);
    const deleted = await cliJson(["endpoints", "delete", created.id, "--merchant", merchant]);
    expect(deleted.deleted).toBe(true);
  });

  it("status shows the store, its schema, counts, the backlog and the running server", async () => {
    const status = await cliJson(["status"]);
    const { PAYGATE_DATABASE_URL: databaseUrl } = await engineEnv(data);
    expect(status.database).toContain(databaseUrl ? new URL(databaseUrl).pathname : data);
    expect(status.migrations[0]).toBe("001_init");
    expect(status.counts.merchants).toBe(1);
    expect(status.counts.payments).toBeGreaterThan(0);
    expect(status.server).toMatchObject({ running: true, url: server.url });
    const text = await runCli(["status", "--data", data]);
    expect(text.stdout).toMatch(/server:\s+running/);
    expect(text.stdout).toMatch(/master key:\s+correct/);
    const wrongKey = await runCli(["status", "--data", data], { env: { PAYGATE_MASTER_KEY: Buffer.alloc(32, 9).toString("base64") } });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toMatch(/invalid PAYGATE_MASTER_KEY: it is not the master key/);
  });

  it("help marks required options, lists environment-only settings and each connector's secret format", async () => {
    expect((await runCli(["payments", "capture", "--help"])).stdout).toMatch(/--merchant <id>.*\(required\)/);
    expect((await runCli(["serve", "--help"])).stdout).toContain("PAYGATE_MASTER_KEY");
    const secrets = (await runCli(["secrets", "put", "--help"])).stdout;
    for (const part of ["stripe", "webhook_secret", "tsys", "transaction_key", "nmi"]) expect(secrets).toContain(part);
  });
});

describe("status on a stopped server", () => {
  it("says no server runs once serve has stopped", async () => {
    const dir = freshDataDir();
    const running = await startCliServer(["serve", "--port", "0", "--data", dir]);
    expect(JSON.parse((await runCli(["status", "--data", dir, "--json"])).stdout).server.running).toBe(true);
    await running.stop();
    expect(JSON.parse((await runCli(["status", "--data", dir, "--json"])).stdout).server.running).toBe(false);
  });
});
