/**
 * The idempotency lock of a request that outlives the lock timeout (a slow processor)
 * is refreshed, so a same-key retry is refused instead of running the payment twice.
 * The lock timeout is shortened through its setting so the test need not wait 60 s.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../server/config";
import { startStripeFake, type StripeFake } from "../fakes/stripe-fake";
import { runCli } from "../support/cli";
import { bootServer, freshDataDir, type TestServer } from "../support/harness";
import { liveMerchant } from "./live-account";

const LOCK_TIMEOUT_MS = 600;
const PROCESSOR_DELAY_MS = 4 * LOCK_TIMEOUT_MS;

/** Forwards every request to `target` after `delayMs`: a processor slower than the lock timeout. */
async function slowProxy(target: string, delayMs: number): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", async () => {
      await sleep(delayMs);
      const headers = Object.fromEntries(Object.entries(req.headers).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
      const answer = await fetch(target + (req.url ?? ""), { method: req.method, headers, body: Buffer.concat(chunks) });
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "application/json" });
      res.end(await answer.text());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("a request slower than the idempotency lock timeout", () => {
  let stripe: StripeFake;
  let proxy: Awaited<ReturnType<typeof slowProxy>>;
  let server: TestServer;
  let shop: Awaited<ReturnType<typeof liveMerchant>>;
  beforeAll(async () => {
    stripe = await startStripeFake();
    proxy = await slowProxy(stripe.baseUrl, PROCESSOR_DELAY_MS);
    server = await bootServer({
      env: { PAYGATE_STRIPE_BASE_URL: proxy.url, PAYGATE_CONNECTOR_TIMEOUT: "20s", PAYGATE_IDEMPOTENCY_LOCK_TIMEOUT: `${LOCK_TIMEOUT_MS}ms` },
    });
    shop = await liveMerchant(server, "stripe");
  });
  afterAll(async () => {
    await server.stop();
    await proxy.close();
    await stripe.close();
  });

  it("is not taken over by a same-key retry: 409 idempotency_conflict, one processor call", async () => {
    const headers = { "idempotency-key": "slow-sale" };
    const first = shop.client.sale({ amount: 3100, gateway_token: shop.token }, headers);
    await sleep(2 * LOCK_TIMEOUT_MS);
    const retry = await shop.client.sale({ amount: 3100, gateway_token: shop.token }, headers);
    expect(retry.status).toBe(409);
    expect((await retry.json()).error.code).toBe("idempotency_conflict");

    const done = await first;
    expect(done.status).toBe(201);
    expect(stripe.requests.filter((request) => request.path === "/v1/payment_intents")).toHaveLength(1);
    const replay = await shop.client.sale({ amount: 3100, gateway_token: shop.token }, headers);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
  }, 20_000);
});

describe("PAYGATE_IDEMPOTENCY_TTL shorter than the lock timeout", () => {
  it("refuses to start, naming the setting", async () => {
    const dataDir = freshDataDir();
    const result = await runCli(["serve", "--port", "0", "--data", dataDir], { env: { PAYGATE_IDEMPOTENCY_TTL: "30s" } });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("PAYGATE_IDEMPOTENCY_TTL");
  });

  it("is measured against the configured lock timeout", () => {
    expect(() => loadConfig({}, { PAYGATE_IDEMPOTENCY_TTL: "59s" })).toThrow(ConfigError);
    expect(() => loadConfig({}, { PAYGATE_IDEMPOTENCY_TTL: "60s" })).not.toThrow();
    expect(() => loadConfig({}, { PAYGATE_IDEMPOTENCY_TTL: "30s", PAYGATE_IDEMPOTENCY_LOCK_TIMEOUT: "10s" })).not.toThrow();
    expect(() => loadConfig({}, { PAYGATE_IDEMPOTENCY_TTL: "5s", PAYGATE_IDEMPOTENCY_LOCK_TIMEOUT: "10s" })).toThrow(/PAYGATE_IDEMPOTENCY_TTL/);
  });
});
