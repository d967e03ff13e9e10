import { describe, expect, it } from "vitest";
import { field, type RecordedRequest } from "../fakes/http-fake";
import { startStripeFake, type StripeFake } from "../fakes/stripe-fake";
import { describeLiveProcessor, useLiveServer, type FakeCharge, type LiveProcessor } from "./live-suite";
import { expectError } from "../support/errors";

const FIRST = { api_key: "sk_live_51FirstKeyQ7xVv2pLm", webhook_secret: "whsec_firstSigningSecret8Jd" };
const ROTATED = { api_key: "rk_live_51RotatedKeyZ3wYt9kN", webhook_secret: "whsec_rotatedSigningSecret4Hq" };

const STATES: Record<StripeFake["charges"][number]["status"], FakeCharge["state"]> = {
  requires_capture: "authorized",
  succeeded: "captured",
  canceled: "voided",
};

const stripe: LiveProcessor<StripeFake> = {
  id: "stripe",
  keyKind: "api_key",
  baseUrlEnv: "PAYGATE_STRIPE_BASE_URL",
  startFake: startStripeFake,
  secrets: [JSON.stringify(FIRST), JSON.stringify(ROTATED)],
  secretValues: [FIRST.api_key, FIRST.webhook_secret, ROTATED.api_key, ROTATED.webhook_secret],
  credentialSent: (request) => /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1],
  credentialOf: (version) => (version === 0 ? FIRST : ROTATED).api_key,
  isMoneyMoving: () => true,
  isCharge: (request) => request.path === "/v1/payment_intents",
  cardNumberIn: (request) => field(request.body, "payment_method_data[card][number]"),
  amountSent: (request) => ({ amount: field(request.body, "amount"), currency: field(request.body, "currency") }),
  wireAmount: (amount, currency) => ({ amount: String(amount), currency }),
  chargeOf(fake, transactionId) {
    const intent = fake.charges.find((candidate) => candidate.id === transactionId);
    return intent && { state: STATES[intent.status], captured: intent.amountReceived, refunded: intent.amountRefunded };
  },
  approvedCharges: (fake) => fake.charges.length,
  recoversLostFollowOns: true,
  timeoutRetry: "replayed",
};

describe("stripe in live mode, over paygate's HTTP API", () => {
  const ctx = useLiveServer(stripe);
  describeLiveProcessor(stripe, ctx, () => {
    it("re-sends a timed-out sale with the same Stripe Idempotency-Key, and derives a new one per paygate key", async () => {
      const token = await ctx.token();
      const from = ctx.fake.requests.length;
      ctx.fake.failNext("hang", 1);
      await expectError(await ctx.client.sale({ amount: 777, gateway_token: token }, { "idempotency-key": "stripe-key-a" }), 504, "connector_timeout");
      expect((await ctx.client.sale({ amount: 777, gateway_token: token }, { "idempotency-key": "stripe-key-a" })).status).toBe(201);
      expect((await ctx.client.sale({ amount: 777, gateway_token: token }, { "idempotency-key": "stripe-key-b" })).status).toBe(201);
      const [first, retry, other] = ctx.since(from).map((request: RecordedRequest) => request.headers["idempotency-key"]);
      expect(first).toMatch(/^pg[0-9a-f]{30}$/);
      expect(retry).toBe(first);
      expect(other).not.toBe(first);
      expect(ctx.fake.charges.filter((intent) => intent.amount === 777)).toHaveLength(2);
    });

    it("sends zero-decimal amounts as they are and never sends the webhook secret", async () => {
      const token = await ctx.token();
      const from = ctx.fake.requests.length;
      const sold = await ctx.client.sale({ amount: 500, currency: "JPY", gateway_token: token });
      expect(sold.status).toBe(201);
      expect(await sold.json()).toMatchObject({ amount: 500, currency: "jpy", status: "succeeded" });
      const [sale] = ctx.since(from);
      expect(stripe.amountSent(sale as RecordedRequest)).toEqual({ amount: "500", currency: "jpy" });
      for (const request of ctx.fake.requests) {
        expect(request.raw).not.toContain("whsec_");
        expect(JSON.stringify(request.headers)).not.toContain("whsec_");
      }
    });
  });
});
