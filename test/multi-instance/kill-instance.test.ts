/**
 * kill -9 one of three instances in the middle of a load of sales; the clients retry
 * what got no answer on another instance with the same Idempotency-Key. Afterwards:
 * every acknowledged payment is in the database, each client key made one payment and
 * the processor (the Stripe fake) one charge for it, and every event of the test-mode
 * sales reached the receiver, including those whose delivery the killed instance had
 * leased (its leases lapse and another instance sends them).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { startWebhookReceiver, type WebhookReceiver } from "../fakes/webhook-receiver";
import { freshKey, LIVE_CARD, ON_POSTGRES, post, startDeployment, type Answer, type Deployment } from "./deployment";

const SALES_PER_MODE = 90;
const WORKERS = 6;
const TEST_CARD = { ...LIVE_CARD, number: "4242424242424242" };

describe.runIf(ON_POSTGRES)("kill -9 one of three instances under load", () => {
  let deployment: Deployment;
  let receiver: WebhookReceiver;
  let testKey: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    deployment = await startDeployment({
      // A request cut by the kill holds its Idempotency-Key and its deliveries' leases: short, so the test ends soon.
      env: { PAYGATE_IDEMPOTENCY_LOCK_TIMEOUT: "3s", PAYGATE_WEBHOOK_TIMEOUT: "2s", PAYGATE_WEBHOOK_RETRY_SCHEDULE: "1s,1s,1s,1s,1s,1s,1s,1s" },
    });
    const env = deployment.env;
    const key = await runCli(["keys", "create", "--merchant", deployment.merchantShortId, "--name", "test backend", "--mode", "test", "--json"], { env });
    expect(key.code, key.stderr).toBe(0);
    testKey = JSON.parse(key.stdout).key;
    expect((await runCli(["secrets", "put", "multi/mock"], { env, input: "mock-credential" })).code).toBe(0);
    const account = await runCli(["accounts", "create", "--merchant", deployment.merchantShortId, "--connector", "mock", "--mode", "test", "--key-kind", "api_key", "--label", "sandbox", "--credential-ref", "secret://multi/mock", "--default"], { env });
    expect(account.code, account.stderr).toBe(0);
    const endpoint = await runCli(["endpoints", "create", "--merchant", deployment.merchantShortId, "--mode", "test", "--url", receiver.url, "--events", "payment.captured", "--json"], { env });
    expect(endpoint.code, endpoint.stderr).toBe(0);
  }, 90_000);

  afterAll(async () => {
    await deployment?.close();
    await receiver?.close();
  });

  it("every acknowledged payment is kept, none charged twice, no event lost", async () => {
    const { servers, db, stripe } = deployment;
    const alive = new Set([0, 1, 2]);
    const tokens = {
      live: (await post(servers[0]!, deployment.key, "/v1/tokens", { card: LIVE_CARD })).body.token as string,
      test: (await post(servers[0]!, testKey, "/v1/tokens", { card: TEST_CARD })).body.token as string,
    };
    const jobs = Array.from({ length: SALES_PER_MODE * 2 }, (_, i) => ({ mode: i % 2 === 0 ? ("live" as const) : ("test" as const), key: freshKey("kill") }));
    const acknowledged = new Map<string, string>();
    let next = 0;
    let turn = 0;

    /** Sends the sale until an instance answers 201, moving on to another instance after no answer or a busy one. */
    async function sell(job: (typeof jobs)[number]): Promise<void> {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const instance = [...alive][turn++ % alive.size]!;
        let answer: Answer | undefined;
        try {
          answer = await post(servers[instance]!, job.mode === "live" ? deployment.key : testKey, "/v1/payments/sale", { amount: 2000, currency: "usd", gateway_token: tokens[job.mode] }, job.key);
        } catch {
          // No answer (the instance died under the request): the same key, on another instance.
        }
        if (answer?.status === 201) {
          acknowledged.set(job.key, answer.body.id);
          return;
        }
        if (answer && ![409, 500, 502, 503, 504].includes(answer.status)) throw new Error(`${job.key}: ${answer.status} ${JSON.stringify(answer.body)}`);
        if (Date.now() > deadline) throw new Error(`${job.key}: no 201 within 60 s (last ${answer?.status})`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }

    const worker = async () => {
      while (next < jobs.length) await sell(jobs[next++]!);
    };
    const load = Promise.all(Array.from({ length: WORKERS }, worker));

    // Deliveries hang while the victim dies, so it dies holding leases on some of them.
    await receiver.waitUntil((received) => received.length >= 10, 30_000);
    receiver.hang();
    await receiver.waitUntil((received) => received.filter((r) => r.answeredWith === null).length >= 6, 30_000);
    alive.delete(1);
    servers[1]!.child.kill("SIGKILL");
    receiver.answer(200);
    receiver.dropHung();
    await load;

    expect(acknowledged.size).toBe(jobs.length);
    const payments = await db.selectFrom("payments").select(["id", "connector_transaction_id", "mode"]).execute();
    const stored = new Set(payments.map((p) => p.id));
    for (const id of acknowledged.values()) expect(stored.has(id), id).toBe(true);
    // One payment per client key, and, at the processor, one charge per live payment.
    expect(payments).toHaveLength(jobs.length);
    const live = payments.filter((p) => p.mode === "live");
    expect(live).toHaveLength(SALES_PER_MODE);
    expect(stripe.charges).toHaveLength(SALES_PER_MODE);
    expect(new Set(live.map((p) => p.connector_transaction_id))).toEqual(new Set(stripe.charges.map((c) => c.id)));

    const captured = await db.selectFrom("events").select("id").where("type", "=", "payment.captured").where("mode", "=", "test").execute();
    expect(captured).toHaveLength(SALES_PER_MODE);
    const delivered = () => new Set(receiver.received.filter((r) => r.answeredWith === 200).map((r) => JSON.parse(r.raw).id as string));
    await receiver.waitUntil(() => captured.every((e) => delivered().has(e.id)), 60_000);
  }, 240_000);
});
