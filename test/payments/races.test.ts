/**
 * Follow-ons racing across processes: two `paygate serve` processes (the bundle) on one
 * data dir, live mode against the local Stripe fake, which records every request it gets.
 * Whatever the interleaving, the processor must never be asked to capture a payment twice
 * or to refund more than was captured, and paygate's records must agree with it.
 */
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStripeFake, type StripeFake } from "../fakes/stripe-fake";
import { field } from "../fakes/http-fake";
import { runCli, startCliServer, type CliServer } from "../support/cli";
import { freshDataDir } from "../support/harness";

const ROUNDS = 100;
const AMOUNT = 1000;
/** Two of these fit in a capture of 1000 (600 + 300), three never do. */
const REFUNDS = [600, 600, 300];

async function cli(args: string[], input?: string): Promise<string> {
  const result = await runCli(args, input === undefined ? {} : { input });
  expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

describe("follow-ons racing across two serve processes", () => {
  let data: string;
  let stripe: StripeFake;
  let servers: CliServer[];
  let key: string;
  let sequence = 0;

  beforeAll(async () => {
    data = freshDataDir();
    // Only serve, sandbox and migrate create a store.
    await cli(["migrate", "--data", data]);
    const merchant = JSON.parse(await cli(["merchants", "create", "--name", "Race shop", "--json", "--data", data]));
    key = JSON.parse(await cli(["keys", "create", "--merchant", merchant.short_id, "--name", "backend", "--mode", "live", "--json", "--data", data])).key;
    await cli(["secrets", "put", "race/stripe", "--data", data], '{"api_key":"sk_live_RaceKey","webhook_secret":"whsec_RaceSecret"}');
    await cli(["accounts", "create", "--merchant", merchant.short_id, "--connector", "stripe", "--mode", "live", "--key-kind", "api_key", "--label", "main", "--credential-ref", "secret://race/stripe", "--default", "--data", data]);
    stripe = await startStripeFake();
    const env = { PAYGATE_STRIPE_BASE_URL: stripe.baseUrl, PAYGATE_CONNECTOR_TIMEOUT: "10s" };
    servers = await Promise.all([0, 1].map(() => startCliServer(["serve", "--port", "0", "--data", data], { env })));
  }, 60_000);

  afterAll(async () => {
    await Promise.all((servers ?? []).map((server) => server.stop()));
    await stripe?.close();
    rmSync(data, { recursive: true, force: true });
  });

  const post = async (server: number, path: string, body: unknown) => {
    const res = await fetch(`${servers[server % 2]?.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "idempotency-key": `race-${++sequence}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it(`${ROUNDS} rounds of two captures and three refunds at once, spread over both processes`, async () => {
    const tokenized = await post(0, "/v1/tokens", { card: { number: "5555555555554444", exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: "123" } });
    expect(tokenized.status, JSON.stringify(tokenized.body)).toBe(201);
    const token = tokenized.body.token as string;

    for (let round = 0; round < ROUNDS; round++) {
      const authorized = await post(round, "/v1/payments/authorize", { amount: AMOUNT, currency: "usd", gateway_token: token, capture_method: "manual" });
      expect(authorized.status, JSON.stringify(authorized.body)).toBe(201);
      const payment = authorized.body;
      const intent = payment.connector_transaction_id as string;

      const captures = [0, 1].map((server) => post(server + round, "/v1/payments/capture", { payment_id: payment.id }));
      const refunds = REFUNDS.map((amount, i) => post(i + round, "/v1/payments/refund", { payment_id: payment.id, amount }));
      const [captured, refunded] = await Promise.all([Promise.all(captures), Promise.all(refunds)]);

      const context = `round ${round}: ${JSON.stringify([...captured, ...refunded].map((r) => [r.status, r.body.error?.code]))}`;
      // The loser of the capture race sees the state it lost to; nothing fails or is left busy.
      expect(captured.map((r) => r.status).sort(), context).toEqual([200, 409]);
      for (const r of captured.filter((r) => r.status === 409)) expect(r.body.error.code, context).toBe("invalid_state_transition");
      for (const r of refunded.filter((r) => r.status !== 200)) {
        expect([400, 409], context).toContain(r.status);
        expect(r.body.error.code, context).toBe(r.status === 400 ? "amount_too_large" : "invalid_state_transition");
      }

      const capturesSent = stripe.requests.filter((request) => request.path === `/v1/payment_intents/${intent}/capture`);
      const refundsSent = stripe.requests.filter((request) => request.path === "/v1/refunds" && field(request.body, "payment_intent") === intent);
      const refundedAtProcessor = refundsSent.reduce((sum, request) => sum + Number(field(request.body, "amount")), 0);
      expect(capturesSent, context).toHaveLength(1);
      expect(refundedAtProcessor, context).toBeLessThanOrEqual(AMOUNT);
      expect(refundsSent, context).toHaveLength(refunded.filter((r) => r.status === 200).length);

      const charge = stripe.charges.find((candidate) => candidate.id === intent);
      const final = await fetch(`${servers[(round + 1) % 2]?.url}/v1/payments/${payment.id}`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json() as Promise<any>);
      expect(final, context).toMatchObject({ amount_captured: charge?.amountReceived, amount_refunded: charge?.amountRefunded });
      expect(final.amount_refunded, context).toBe(refundedAtProcessor);
      expect(final.refunds.reduce((sum: number, r: { amount: number }) => sum + r.amount, 0), context).toBe(refundedAtProcessor);
      expect(final.status, context).toBe(refundedAtProcessor === 0 ? "succeeded" : refundedAtProcessor === AMOUNT ? "refunded" : "partially_refunded");
    }
  }, 300_000);

  it("refunds that fit all succeed when sent at once to both processes: 3 × 400 of 1000 gives two 200s — 50 times", async () => {
    const tokenized = await post(1, "/v1/tokens", { card: { number: "5555555555554444", exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: "123" } });
    const token = tokenized.body.token as string;
    for (let round = 0; round < 50; round++) {
      const sold = await post(round, "/v1/payments/sale", { amount: AMOUNT, currency: "usd", gateway_token: token });
      expect(sold.status, JSON.stringify(sold.body)).toBe(201);
      const results = await Promise.all([0, 1, 2].map((i) => post(i + round, "/v1/payments/refund", { payment_id: sold.body.id, amount: 400 })));
      const context = `round ${round}: ${JSON.stringify(results.map((r) => [r.status, r.body.error?.code]))}`;
      expect(results.map((r) => r.status).sort(), context).toEqual([200, 200, 400]);
      expect(results.find((r) => r.status === 400)?.body.error.code, context).toBe("amount_too_large");
      const intent = sold.body.connector_transaction_id as string;
      const sent = stripe.requests.filter((request) => request.path === "/v1/refunds" && field(request.body, "payment_intent") === intent);
      expect(sent.map((request) => field(request.body, "amount")), context).toEqual(["400", "400"]);
    }
  }, 300_000);
});
