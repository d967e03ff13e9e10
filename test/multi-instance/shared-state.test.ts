/**
 * Three `serve` processes on one PostgreSQL database, live mode against the Stripe fake,
 * which records every request: what one instance holds (an idempotency claim, a
 * follow-on's claim, a key revocation) holds for the other two.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { field } from "../fakes/http-fake";
import { freshKey, LIVE_CARD, ON_POSTGRES, post, startDeployment, type Deployment } from "./deployment";

describe.runIf(ON_POSTGRES)("three instances on one PostgreSQL database", () => {
  let deployment: Deployment;
  let token: string;

  beforeAll(async () => {
    deployment = await startDeployment();
    const tokenized = await post(deployment.servers[0]!, deployment.key, "/v1/tokens", { card: LIVE_CARD });
    expect(tokenized.status, JSON.stringify(tokenized.body)).toBe(201);
    token = tokenized.body.token;
  }, 90_000);

  afterAll(async () => {
    await deployment?.close();
  });

  it("the same Idempotency-Key sent to all three at once makes one payment and one charge — 20 times", async () => {
    const { servers, key, stripe, db } = deployment;
    for (let round = 0; round < 20; round++) {
      const idempotencyKey = freshKey("same");
      const before = stripe.requests.length;
      const answers = await Promise.all(servers.map((server) => post(server, key, "/v1/payments/sale", { amount: 1500, currency: "usd", gateway_token: token }, idempotencyKey)));
      const context = `round ${round}: ${JSON.stringify(answers.map((a) => [a.status, a.body.id ?? a.body.error?.code]))}`;
      const created = answers.filter((a) => a.status === 201);
      expect(created.length, context).toBeGreaterThanOrEqual(1);
      for (const a of answers.filter((a) => a.status !== 201)) {
        expect(a.status, context).toBe(409);
        expect(a.body.error.code, context).toBe("idempotency_conflict");
      }
      expect(new Set(created.map((a) => a.body.id)).size, context).toBe(1);
      const charges = stripe.requests.slice(before).filter((r) => r.method === "POST" && r.path === "/v1/payment_intents");
      expect(charges, context).toHaveLength(1);
      const rows = await db.selectFrom("payments").select("id").where("amount", "=", 1500).execute();
      expect(rows, context).toHaveLength(round + 1);
    }
  }, 120_000);

  it("captures and refunds of one payment spread over the three: at most one capture, never more refunded than captured — 30 rounds", async () => {
    const { servers, key, stripe } = deployment;
    const AMOUNT = 1000;
    for (let round = 0; round < 30; round++) {
      const authorized = await post(servers[round % 3]!, key, "/v1/payments/authorize", { amount: AMOUNT, currency: "usd", gateway_token: token, capture_method: "manual" });
      expect(authorized.status, JSON.stringify(authorized.body)).toBe(201);
      const intent = authorized.body.connector_transaction_id as string;
      const captures = [0, 1, 2].map((i) => post(servers[(i + round) % 3]!, key, "/v1/payments/capture", { payment_id: authorized.body.id }));
      const refunds = [600, 600, 300].map((amount, i) => post(servers[(i + round + 1) % 3]!, key, "/v1/payments/refund", { payment_id: authorized.body.id, amount }));
      const [captured, refunded] = await Promise.all([Promise.all(captures), Promise.all(refunds)]);
      const context = `round ${round}: ${JSON.stringify([...captured, ...refunded].map((r) => [r.status, r.body.error?.code]))}`;
      expect(captured.map((r) => r.status).sort(), context).toEqual([200, 409, 409]);
      for (const r of [...captured, ...refunded]) expect([200, 400, 409], context).toContain(r.status);

      const capturesSent = stripe.requests.filter((r) => r.path === `/v1/payment_intents/${intent}/capture`);
      const refundsSent = stripe.requests.filter((r) => r.path === "/v1/refunds" && field(r.body, "payment_intent") === intent);
      const refundedAtProcessor = refundsSent.reduce((sum, r) => sum + Number(field(r.body, "amount")), 0);
      expect(capturesSent, context).toHaveLength(1);
      expect(refundedAtProcessor, context).toBeLessThanOrEqual(AMOUNT);
      expect(refundsSent, context).toHaveLength(refunded.filter((r) => r.status === 200).length);
      const final = await fetch(`${servers[(round + 2) % 3]!.url}/v1/payments/${authorized.body.id}`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.json() as Promise<any>);
      expect(final.amount_refunded, context).toBe(refundedAtProcessor);
    }
  }, 240_000);

  it("a key revoked through one instance fails on the other two within 1 s", async () => {
    const { servers, key } = deployment;
    for (let round = 0; round < 5; round++) {
      const created = await post(servers[0]!, key, "/v1/api-keys", { name: `short-lived ${round}` });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      const get = (server: number) => fetch(`${servers[server]!.url}/v1/api-keys`, { headers: { authorization: `Bearer ${created.body.key}` } }).then((r) => r.status);
      // Every instance has the key cached.
      expect(await Promise.all([0, 1, 2].map(get))).toEqual([200, 200, 200]);
      const revoker = round % 3;
      const revoked = await fetch(`${servers[revoker]!.url}/v1/api-keys/${created.body.id}`, { method: "DELETE", headers: { authorization: `Bearer ${key}` } });
      expect(revoked.status).toBe(200);
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await Promise.all([0, 1, 2].map(get)), `round ${round}, revoked through instance ${revoker}`).toEqual([401, 401, 401]);
    }
  }, 60_000);
});
