import { afterEach, describe, expect, it } from "vitest";
import { freshDataDir } from "../support/harness";
import { startCliServer, type CliServer } from "../support/cli";
import { futureExpiry } from "../support/expiry";
import { startWebhookReceiver, type WebhookReceiver } from "../fakes/webhook-receiver";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (check()) return true;
    await sleep(50);
  }
  return check();
}

async function post(server: CliServer, path: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${server.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "idempotency-key": `logs-${Math.random()}` }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

describe("serve's logs reach stdout", () => {
  let server: CliServer | undefined;
  let receiver: WebhookReceiver | undefined;
  afterEach(async () => {
    await server?.stop("SIGKILL");
    await receiver?.close();
    server = undefined;
    receiver = undefined;
  });

  it("writes an info line within about a second on a quiet server", async () => {
    server = await startCliServer(["serve", "--port", "0", "--data", freshDataDir()], { env: { PAYGATE_LOG_LEVEL: "info" } });
    expect((await fetch(`${server.url}/health/ready`)).status).toBe(200);
    const running = server;
    const arrived = await waitFor(() => running.output().includes('"/health/ready"'), 2500);
    expect(arrived, running.output()).toBe(true);
  });

  it("writes a warning at once: a kill -9 just after a dead-lettered delivery loses nothing", async () => {
    receiver = await startWebhookReceiver({ status: 500 });
    server = await startCliServer(["serve", "--dev", "--port", "0", "--data", freshDataDir()], {
      env: { PAYGATE_LOG_LEVEL: "info", PAYGATE_WEBHOOK_RETRY_SCHEDULE: "100ms" },
    });
    await post(server, "/v1/webhook_endpoints", { url: receiver.url, event_types: ["payment.captured"] });
    const { token } = await post(server, "/v1/tokens", { card: { number: "4242424242424242", ...futureExpiry(), cvc: "123" } });
    await post(server, "/v1/payments/sale", { amount: 1000, currency: "usd", gateway_token: token });
    await receiver.waitUntil((received) => received.length === 2, 10_000);
    // Well under the 1 s flush timer: only a flush at the warning itself gets the line out.
    await sleep(300);
    await server.stop("SIGKILL");
    const stdout = server.output();
    expect(stdout, server.output()).toContain("webhook delivery dead-lettered");
    expect(stdout).toContain('"/v1/payments/sale"');
  });
});
