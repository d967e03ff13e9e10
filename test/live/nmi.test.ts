import { describe, expect, it } from "vitest";
import { currencyExponent } from "../../server/payments/currency";
import { field, type RecordedRequest } from "../fakes/http-fake";
import { QUERY_PATH, TRANSACT_PATH, startNmiFake, type NmiFake, type NmiFakeTransaction } from "../fakes/nmi-fake";
import { describeLiveProcessor, useLiveServer, type FakeCharge, type LiveProcessor } from "./live-suite";
import { expectError } from "../support/errors";

const FIRST = "6457Thfj624V5r7WUwc5v6a68Zsd6YEm";
const ROTATED = "Rotd93kLq2Zx7Vb4Nw8Pm1Hc6Jt5Gy0F";

const STATES: Partial<Record<NmiFakeTransaction["condition"], FakeCharge["state"]>> = {
  pending: "authorized",
  pendingsettlement: "captured",
  canceled: "voided",
};

/** The fake keeps thousandths of the currency unit. */
function minor(thousandths: number, transaction: NmiFakeTransaction): number {
  return Math.round((thousandths * 10 ** currencyExponent(transaction.currency ?? "usd")) / 1000);
}

const isTransact = (request: RecordedRequest) => request.path === TRANSACT_PATH;

const nmi: LiveProcessor<NmiFake> = {
  id: "nmi",
  keyKind: "security_key",
  baseUrlEnv: "PAYGATE_NMI_BASE_URL",
  startFake: startNmiFake,
  secrets: [FIRST, ROTATED],
  secretValues: [FIRST, ROTATED],
  credentialSent: (request) => field(request.body, "security_key"),
  credentialOf: (version) => (version === 0 ? FIRST : ROTATED),
  isMoneyMoving: isTransact,
  isCharge: (request) => isTransact(request) && ["sale", "auth"].includes(field(request.body, "type") ?? ""),
  cardNumberIn: (request) => field(request.body, "ccnumber"),
  amountSent: (request) => ({ amount: field(request.body, "amount"), currency: field(request.body, "currency") }),
  wireAmount: (amount, currency) => ({
    amount: currencyExponent(currency) === 0 ? String(amount) : (amount / 10 ** currencyExponent(currency)).toFixed(currencyExponent(currency)),
    currency: currency.toUpperCase(),
  }),
  chargeOf(fake, transactionId) {
    const transaction = fake.charges.find((candidate) => candidate.transactionId === transactionId);
    const state = transaction && STATES[transaction.condition];
    return transaction && state && { state, captured: minor(transaction.capturedAmount, transaction), refunded: minor(transaction.refundedAmount, transaction) };
  },
  approvedCharges: (fake) => fake.charges.length,
  recoversLostFollowOns: true,
  timeoutRetry: "found",
};

describe("nmi in live mode, over paygate's HTTP API", () => {
  const ctx = useLiveServer(nmi);
  describeLiveProcessor(nmi, ctx, () => {
    it("sends zero-decimal (jpy) amounts as whole units in sale, refund and capture", async () => {
      const token = await ctx.token();
      const from = ctx.fake.requests.length;
      const sold = await ctx.client.sale({ amount: 500, currency: "jpy", gateway_token: token });
      const payment = await sold.json();
      expect(sold.status, JSON.stringify(payment)).toBe(201);
      expect((await ctx.client.refund({ payment_id: payment.id, amount: 120 })).status).toBe(200);
      const authorized = await (await ctx.client.authorize({ amount: 9000, currency: "jpy", gateway_token: token, capture_method: "manual" })).json();
      expect((await ctx.client.capture({ payment_id: authorized.id, amount: 8999 })).status).toBe(200);

      const sent = ctx.since(from).filter(isTransact).map((request) => ({ type: field(request.body, "type"), ...nmi.amountSent(request) }));
      expect(sent).toEqual([
        { type: "sale", amount: "500", currency: "JPY" },
        { type: "refund", amount: "120", currency: undefined },
        { type: "auth", amount: "9000", currency: "JPY" },
        { type: "capture", amount: "8999", currency: undefined },
      ]);
      expect(nmi.chargeOf(ctx.fake, payment.connector_transaction_id)).toEqual({ state: "captured", captured: 500, refunded: 120 });
    });

    it("looks the reference up before every sale, auth and refund, and finds a lost sale instead of charging again", async () => {
      const token = await ctx.token();
      const from = ctx.fake.requests.length;
      ctx.fake.failNext("hang", 1, isTransact);
      await expectError(await ctx.client.sale({ amount: 2300, gateway_token: token }, { "idempotency-key": "nmi-lost" }), 504, "connector_timeout");
      const retry = await ctx.client.sale({ amount: 2300, gateway_token: token }, { "idempotency-key": "nmi-lost" });
      const payment = await retry.json();
      expect(retry.status).toBe(201);
      const requests = ctx.since(from);
      expect(requests.map((request) => `${request.path} ${field(request.body, "type") ?? ""}`.trim())).toEqual([QUERY_PATH, `${TRANSACT_PATH} sale`, QUERY_PATH]);
      expect(field(requests[0]?.body ?? {}, "order_id")).toBe(field(requests[1]?.body ?? {}, "orderid"));
      const [sale] = ctx.fake.charges.filter((transaction) => transaction.orderId === field(requests[1]?.body ?? {}, "orderid"));
      expect(payment.connector_transaction_id).toBe(sale?.transactionId);
    });

    it("confirms a lost capture only for the amount it was made for", async () => {
      const token = await ctx.token();
      const authorized = await (await ctx.client.authorize({ amount: 1000, gateway_token: token, capture_method: "manual" })).json();
      ctx.fake.failNext("hang", 1, isTransact);
      await expectError(await ctx.client.capture({ payment_id: authorized.id, amount: 400 }, { "idempotency-key": "nmi-capture-amount" }), 504, "connector_timeout");
      const from = ctx.fake.requests.length;
      // While its record lives, the key is bound to the 400: another amount never reaches NMI.
      await expectError(await ctx.client.capture({ payment_id: authorized.id, amount: 500 }, { "idempotency-key": "nmi-capture-amount" }), 422, "idempotency_param_mismatch");
      expect(ctx.since(from)).toHaveLength(0);
      // Once it expired, the same processor reference reaches NMI, whose look-up confirms 400 only.
      await ctx.server.app.db.updateTable("idempotency_keys").set({ expires_at: 0 }).where("key", "=", "nmi-capture-amount").execute();
      const other = await ctx.client.capture({ payment_id: authorized.id, amount: 500 }, { "idempotency-key": "nmi-capture-amount" });
      expect(other.status).toBe(502);
      expect((await other.json()).error).toMatchObject({ connector_code: "processor_error", payment_id: authorized.id });
      const [capture, query] = ctx.since(from);
      expect(capture?.body).toMatchObject({ type: "capture", transactionid: authorized.connector_transaction_id, amount: "5.00" });
      expect(query?.path).toBe(QUERY_PATH);
      expect(query?.body).toEqual({ security_key: expect.any(String), transaction_id: authorized.connector_transaction_id });
      expect((await (await ctx.client.get(authorized.id)).json()).status).toBe("authorized");
      const same = await ctx.client.capture({ payment_id: authorized.id, amount: 400 }, { "idempotency-key": "nmi-capture-amount-2" });
      expect(same.status).toBe(200);
      expect(await same.json()).toMatchObject({ status: "succeeded", amount_captured: 400 });
    });

    it.each(["500", "malformed", "hang"] as const)("stops when the look-up answers %s: nothing is sent, nothing stored", async (mode) => {
      const token = await ctx.token();
      const from = ctx.fake.requests.length;
      ctx.fake.failNext(mode, 1, (request) => request.path === QUERY_PATH);
      const res = await ctx.client.sale({ amount: 2400, gateway_token: token }, { "idempotency-key": `nmi-query-${mode}` });
      const { error } = await res.json();
      if (mode === "hang") expect(error).toMatchObject({ code: "connector_timeout" });
      else expect(error).toMatchObject({ code: "connector_error", connector_code: "processor_error" });
      expect(ctx.since(from).filter(isTransact)).toHaveLength(0);
      const retry = await ctx.client.sale({ amount: 2400, gateway_token: token }, { "idempotency-key": `nmi-query-${mode}` });
      expect(retry.status).toBe(201);
      expect(ctx.since(from).filter(isTransact)).toHaveLength(1);
    });
  });
});
