/**
 * The live-mode checks every processor must pass, run through paygate's HTTP API against the
 * processor's local fake (issue 9, "done when"). Each `test/live/<processor>.test.ts` describes
 * how its processor's requests look (`LiveProcessor`) and calls `describeLiveProcessor`; what
 * only one processor does (TSYS's in-doubt references, NMI's look-up, amounts) is tested there.
 *
 * One server and one fake per file: tests run in order and count the fake's charges and
 * requests before and after each step instead of assuming a fresh fake.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeServer, RecordedRequest } from "../fakes/http-fake";
import { TEST_CARDS } from "../fakes/http-fake";
import { runCli } from "../support/cli";
import { bootServer, type TestResponse, type TestServer } from "../support/harness";
import { paymentsClient } from "../support/payments";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { futureExpiry } from "../support/expiry";
import { expectError } from "../support/errors";

/** A charge as the fake keeps it, in paygate's minor units. */
export interface FakeCharge {
  state: "authorized" | "captured" | "voided";
  captured: number;
  refunded: number;
}

export interface LiveProcessor<F extends FakeServer> {
  id: "stripe" | "tsys" | "nmi";
  keyKind: "api_key" | "device_credential" | "security_key";
  /** `PAYGATE_<PROCESSOR>_BASE_URL`. */
  baseUrlEnv: string;
  startFake(): Promise<F>;
  /** Two versions of the account's secret as `secrets put` stores them; the second rotates the first. */
  secrets: readonly [string, string];
  /** Every credential value in either version: none may ever reach the log. */
  secretValues: readonly string[];
  /** What identifies, in a request, the credential version it was sent with (API key, transaction key, security key). */
  credentialSent(request: RecordedRequest): string | undefined;
  /** What `credentialSent` reads for `secrets[version]`. */
  credentialOf(version: 0 | 1): string;
  /** The requests that move money: `failNext` targets them (NMI's look-ups are left alone). */
  isMoneyMoving(request: RecordedRequest): boolean;
  /** An authorize or sale request (the only ones that may carry card data). */
  isCharge(request: RecordedRequest): boolean;
  cardNumberIn(request: RecordedRequest): string | undefined;
  amountSent(request: RecordedRequest): { amount: string | undefined; currency: string | undefined };
  /** What `amountSent` should read for paygate's `amount` minor units of `currency`. */
  wireAmount(amount: number, currency: string): { amount: string; currency: string };
  /** The fake's record of an approved charge, by the processor transaction id paygate stored. */
  chargeOf(fake: F, transactionId: string): FakeCharge | undefined;
  approvedCharges(fake: F): number;
  /**
   * How a retry with the same Idempotency-Key gets past a charge whose answer was lost:
   * "replayed" (re-sent; the processor's idempotency key replays the first charge, Stripe),
   * "found" (a look-up by reference finds the charge, nothing re-sent, NMI) or "in_doubt"
   * (504 again, nothing re-sent, TSYS).
   */
  timeoutRetry: "replayed" | "found" | "in_doubt";
  /**
   * Whether a capture, void or refund whose answer was lost succeeds on a retry with the same
   * Idempotency-Key. TSYS cannot (its file tests what it answers instead).
   */
  recoversLostFollowOns: boolean;
}

export interface LiveContext<F extends FakeServer> {
  fake: F;
  server: TestServer;
  merchant: SeededMerchant;
  client: ReturnType<typeof paymentsClient>;
  accountShortId: string;
  secretPath: string;
  /** Tokenizes `number` with the suite's CVC. */
  token(number?: string): Promise<string>;
  /** Requests the fake received since `from` (an index into `fake.requests`). */
  since(from: number): RecordedRequest[];
}

/** Not a test card, Luhn-valid: live mode tokenizes any valid card and the fakes approve it. */
export const LIVE_CARD = "5555555555554444";
/** A CVC the log check looks for; paygate's connectors never send a CVC at all. */
export const CVC = "739";
export const TIMEOUT_MS = 300;

const DECLINES = ["generic_decline", "insufficient_funds", "expired_card", "incorrect_cvc"] as const;

/** Boots paygate in live mode against `processor`'s fake with one live account; call inside a `describe`. */
export function useLiveServer<F extends FakeServer>(processor: LiveProcessor<F>): LiveContext<F> {
  const ctx = { secretPath: `live/${processor.id}` } as LiveContext<F>;
  beforeAll(async () => {
    ctx.fake = await processor.startFake();
    ctx.server = await bootServer({ env: { [processor.baseUrlEnv]: ctx.fake.baseUrl, PAYGATE_CONNECTOR_TIMEOUT: `${TIMEOUT_MS}ms` } });
    ctx.merchant = await seedMerchant(ctx.server, `Live ${processor.id} shop`, "live");
    const stored = await runCli(["secrets", "put", ctx.secretPath, "--data", ctx.server.dataDir], { input: processor.secrets[0] });
    expect(stored, stored.stderr).toMatchObject({ code: 0 });
    const created = await ctx.server.request(`/admin/merchants/${ctx.merchant.merchant.id}/connector-accounts`, {
      method: "POST",
      headers: auth(ctx.merchant.admin),
      json: { connector_id: processor.id, mode: "live", key_kind: processor.keyKind, label: "main", is_default: true, credential_ref: `secret://${ctx.secretPath}` },
    });
    const account = await created.json();
    expect(created.status, JSON.stringify(account)).toBe(201);
    ctx.accountShortId = account.short_id;
    ctx.client = paymentsClient(ctx.server, ctx.merchant.secret);
    ctx.token = async (number = LIVE_CARD) => {
      const res = await ctx.client.post("/v1/tokens", { card: { number, exp_month: 11, exp_year: futureExpiry().exp_year, cvc: CVC } });
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(201);
      expect(body.token).toMatch(/^tok_live_/);
      return body.token as string;
    };
    ctx.since = (from) => ctx.fake.requests.slice(from);
  });
  afterAll(async () => {
    await ctx.server?.stop();
    await ctx.fake?.close();
  });
  return ctx;
}

async function expectPayment(res: TestResponse, status: number): Promise<any> {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(status);
  return body;
}

/** Every string value anywhere in a parsed log line (the CVC is sent as a string; numbers such as durations are left out). */
function stringsOf(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, out);
  else if (typeof value === "object" && value !== null) for (const item of Object.values(value)) stringsOf(item, out);
  return out;
}

/**
 * The shared checks, then `specifics` (the processor's own tests), then the checks over
 * everything the fake received and the server logged, so that those cover every test.
 */
export function describeLiveProcessor<F extends FakeServer>(processor: LiveProcessor<F>, ctx: LiveContext<F>, specifics: () => void): void {
  const paymentCount = async () => {
    const page = await (await ctx.client.list("?limit=100")).json();
    expect(page.has_more).toBe(false);
    return page.data.length as number;
  };

  describe("approvals", () => {
    it("authorizes (manual capture) a non-test card, then captures part of it", async () => {
      const token = await ctx.token();
      const from = ctx.fake.requests.length;
      const authorized = await expectPayment(await ctx.client.authorize({ amount: 1000, gateway_token: token, capture_method: "manual" }), 201);
      expect(authorized).toMatchObject({
        status: "authorized",
        amount_captured: 0,
        connector_id: processor.id,
        connector_account_short_id: ctx.accountShortId,
        test_mode: false,
        card: { last4: LIVE_CARD.slice(-4) },
      });
      const charge = ctx.since(from).filter(processor.isCharge);
      expect(charge).toHaveLength(1);
      expect(processor.cardNumberIn(charge[0] as RecordedRequest)).toBe(LIVE_CARD);
      expect(processor.amountSent(charge[0] as RecordedRequest)).toEqual(processor.wireAmount(1000, "usd"));
      expect(processor.chargeOf(ctx.fake, authorized.connector_transaction_id)).toMatchObject({ state: "authorized", captured: 0 });

      const captured = await expectPayment(await ctx.client.capture({ payment_id: authorized.id, amount: 800 }), 200);
      expect(captured).toMatchObject({ status: "succeeded", amount_captured: 800, connector_transaction_id: authorized.connector_transaction_id });
      expect(processor.chargeOf(ctx.fake, authorized.connector_transaction_id)).toMatchObject({ state: "captured", captured: 800 });
    });

    it("sells (authorize + capture in one call) and the payment is retrievable", async () => {
      const token = await ctx.token(TEST_CARDS.approve);
      const before = processor.approvedCharges(ctx.fake);
      const sold = await expectPayment(await ctx.client.sale({ amount: 2599, gateway_token: token, description: "live sale" }), 201);
      expect(sold).toMatchObject({ status: "succeeded", amount_captured: 2599, capture_method: "automatic", test_mode: false });
      expect(processor.approvedCharges(ctx.fake)).toBe(before + 1);
      expect(processor.chargeOf(ctx.fake, sold.connector_transaction_id)).toMatchObject({ state: "captured", captured: 2599 });
      expect(await expectPayment(await ctx.client.get(sold.id), 200)).toMatchObject({ id: sold.id, status: "succeeded" });
    });

    it("refunds part of a sale, then the rest", async () => {
      const token = await ctx.token();
      const sold = await expectPayment(await ctx.client.sale({ amount: 5000, gateway_token: token }), 201);
      const partial = await expectPayment(await ctx.client.refund({ payment_id: sold.id, amount: 1250, reason: "damaged" }), 200);
      expect(partial).toMatchObject({ status: "partially_refunded", amount_refunded: 1250, refunds: [{ amount: 1250, reason: "damaged" }] });
      expect(processor.chargeOf(ctx.fake, sold.connector_transaction_id)).toMatchObject({ captured: 5000, refunded: 1250 });
      const rest = await expectPayment(await ctx.client.refund({ payment_id: sold.id }), 200);
      expect(rest).toMatchObject({ status: "refunded", amount_refunded: 5000 });
      expect(processor.chargeOf(ctx.fake, sold.connector_transaction_id)).toMatchObject({ refunded: 5000 });
    });

    it("voids an authorization", async () => {
      const token = await ctx.token();
      const authorized = await expectPayment(await ctx.client.authorize({ amount: 700, gateway_token: token, capture_method: "manual" }), 201);
      const voided = await expectPayment(await ctx.client.void({ payment_id: authorized.id }), 200);
      expect(voided).toMatchObject({ status: "voided", amount_captured: 0 });
      expect(processor.chargeOf(ctx.fake, authorized.connector_transaction_id)).toMatchObject({ state: "voided" });
    });
  });

  describe("declines", () => {
    it.each(DECLINES)("%s answers 502 connector_error and keeps a failed payment", async (code) => {
      const token = await ctx.token(TEST_CARDS[code]);
      const before = processor.approvedCharges(ctx.fake);
      const res = await ctx.client.sale({ amount: 1500, gateway_token: token });
      const { error } = await res.json();
      expect(res.status, JSON.stringify(error)).toBe(502);
      expect(error).toMatchObject({ type: "connector_error", code: "connector_error", connector_code: code, payment_id: expect.any(String) });
      expect(JSON.stringify(error)).not.toContain(TEST_CARDS[code]);
      const stored = await expectPayment(await ctx.client.get(error.payment_id), 200);
      expect(stored).toMatchObject({ status: "failed", failure_code: code, amount_captured: 0, connector_transaction_id: null, test_mode: false });
      expect(processor.approvedCharges(ctx.fake)).toBe(before);
      // The decline was committed with its payment: a retry replays it instead of re-asking.
      const requests = ctx.fake.requests.length;
      const again = await ctx.client.sale({ amount: 1500, gateway_token: token }, { "idempotency-key": `decline-${code}` });
      const replay = await ctx.client.sale({ amount: 1500, gateway_token: token }, { "idempotency-key": `decline-${code}` });
      expect([again.status, replay.status]).toEqual([502, 502]);
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect(ctx.since(requests).filter(processor.isCharge)).toHaveLength(1);
    });
  });

  describe("timeouts", () => {
    it("a sale whose answer is lost answers 504, stores nothing, and a retry with the same key charges once", async () => {
      const token = await ctx.token();
      const before = processor.approvedCharges(ctx.fake);
      const stored = await paymentCount();
      const from = ctx.fake.requests.length;
      ctx.fake.failNext("hang", 1, processor.isMoneyMoving);
      const started = Date.now();
      const first = await ctx.client.sale({ amount: 4200, gateway_token: token }, { "idempotency-key": "lost-answer" });
      expect(first.status).toBe(504);
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 2_000);
      expect((await first.json()).error).toMatchObject({ type: "timeout_error", code: "connector_timeout" });
      expect(await paymentCount()).toBe(stored);
      expect(processor.approvedCharges(ctx.fake)).toBe(before + 1); // the processor did charge; only its answer was lost

      const retry = await ctx.client.sale({ amount: 4200, gateway_token: token }, { "idempotency-key": "lost-answer" });
      expect(processor.approvedCharges(ctx.fake)).toBe(before + 1);
      const sent = ctx.since(from).filter(processor.isCharge);
      expect(sent).toHaveLength(processor.timeoutRetry === "replayed" ? 2 : 1);
      if (sent.length === 2) expect(sent[1]?.raw).toBe(sent[0]?.raw); // the identical request, so the processor can replay it
      if (processor.timeoutRetry === "in_doubt") {
        await expectError(retry, 504, "connector_timeout");
        expect(await paymentCount()).toBe(stored);
        return;
      }
      const payment = await expectPayment(retry, 201);
      expect(payment).toMatchObject({ status: "succeeded", amount_captured: 4200 });
      expect(processor.chargeOf(ctx.fake, payment.connector_transaction_id)).toMatchObject({ state: "captured", captured: 4200 });
      const replay = await ctx.client.sale({ amount: 4200, gateway_token: token }, { "idempotency-key": "lost-answer" });
      expect(replay.headers.get("idempotent-replayed")).toBe("true");
      expect((await replay.json()).id).toBe(payment.id);
      expect(processor.approvedCharges(ctx.fake)).toBe(before + 1);
      expect(await paymentCount()).toBe(stored + 1);
    });
  });

  // TSYS can't do this; tsys.test.ts tests what it answers instead.
  if (processor.recoversLostFollowOns) describe("follow-ons whose answer is lost", () => {
    it("capture: 504, then the retry confirms the capture without capturing twice", async () => {
      const token = await ctx.token();
      const authorized = await expectPayment(await ctx.client.authorize({ amount: 1000, gateway_token: token, capture_method: "manual" }), 201);
      ctx.fake.failNext("hang", 1, processor.isMoneyMoving);
      const first = await ctx.client.capture({ payment_id: authorized.id, amount: 400 }, { "idempotency-key": "lost-capture" });
      expect(first.status).toBe(504);
      expect(await expectPayment(await ctx.client.get(authorized.id), 200)).toMatchObject({ status: "authorized" });
      expect(processor.chargeOf(ctx.fake, authorized.connector_transaction_id)).toMatchObject({ state: "captured", captured: 400 });
      const retry = await expectPayment(await ctx.client.capture({ payment_id: authorized.id, amount: 400 }, { "idempotency-key": "lost-capture" }), 200);
      expect(retry).toMatchObject({ status: "succeeded", amount_captured: 400 });
      expect(processor.chargeOf(ctx.fake, authorized.connector_transaction_id)).toMatchObject({ state: "captured", captured: 400 });
    });

    it("void: 504, then the retry confirms the void", async () => {
      const token = await ctx.token();
      const authorized = await expectPayment(await ctx.client.authorize({ amount: 1000, gateway_token: token, capture_method: "manual" }), 201);
      ctx.fake.failNext("hang", 1, processor.isMoneyMoving);
      expect((await ctx.client.void({ payment_id: authorized.id }, { "idempotency-key": "lost-void" })).status).toBe(504);
      const retry = await expectPayment(await ctx.client.void({ payment_id: authorized.id }, { "idempotency-key": "lost-void" }), 200);
      expect(retry).toMatchObject({ status: "voided" });
      expect(processor.chargeOf(ctx.fake, authorized.connector_transaction_id)).toMatchObject({ state: "voided" });
    });

    it("refund: 504, then the retry confirms the refund without refunding twice", async () => {
      const token = await ctx.token();
      const sold = await expectPayment(await ctx.client.sale({ amount: 1000, gateway_token: token }), 201);
      ctx.fake.failNext("hang", 1, processor.isMoneyMoving);
      expect((await ctx.client.refund({ payment_id: sold.id, amount: 400 }, { "idempotency-key": "lost-refund" })).status).toBe(504);
      expect(await expectPayment(await ctx.client.get(sold.id), 200)).toMatchObject({ status: "succeeded", amount_refunded: 0 });
      const retry = await expectPayment(await ctx.client.refund({ payment_id: sold.id, amount: 400 }, { "idempotency-key": "lost-refund" }), 200);
      expect(retry).toMatchObject({ status: "partially_refunded", amount_refunded: 400 });
      expect(processor.chargeOf(ctx.fake, sold.connector_transaction_id)).toMatchObject({ refunded: 400 });
    });
  });

  describe("processor failures", () => {
    it.each(["500", "malformed"] as const)("a %s answer to a sale is 502 processor_error, stores nothing, and a retry with the same key works", async (mode) => {
      const token = await ctx.token();
      const before = processor.approvedCharges(ctx.fake);
      const stored = await paymentCount();
      ctx.fake.failNext(mode, 1, processor.isMoneyMoving);
      const key = `processor-${mode}`;
      const first = await ctx.client.sale({ amount: 3100, gateway_token: token }, { "idempotency-key": key });
      const { error } = await first.json();
      expect(first.status, JSON.stringify(error)).toBe(502);
      expect(error).toMatchObject({ type: "connector_error", code: "connector_error", connector_code: "processor_error" });
      expect(error.payment_id).toBeUndefined();
      expect(await paymentCount()).toBe(stored);
      expect(processor.approvedCharges(ctx.fake)).toBe(before);

      const res = await ctx.client.sale({ amount: 3100, gateway_token: token }, { "idempotency-key": key });
      expect(res.headers.get("idempotent-replayed")).toBeNull();
      const retry = await expectPayment(res, 201);
      expect(retry).toMatchObject({ status: "succeeded", amount_captured: 3100 });
      expect(processor.approvedCharges(ctx.fake)).toBe(before + 1);
      expect(await paymentCount()).toBe(stored + 1);
    });

    it("a 500 answer to a capture leaves the payment authorized, and a retry with the same key captures", async () => {
      const token = await ctx.token();
      const authorized = await expectPayment(await ctx.client.authorize({ amount: 900, gateway_token: token, capture_method: "manual" }), 201);
      ctx.fake.failNext("500", 1, processor.isMoneyMoving);
      const failed = await ctx.client.capture({ payment_id: authorized.id }, { "idempotency-key": "capture-500" });
      const { error } = await failed.json();
      expect(failed.status).toBe(502);
      expect(error).toMatchObject({ code: "connector_error", connector_code: "processor_error", payment_id: authorized.id });
      expect(await expectPayment(await ctx.client.get(authorized.id), 200)).toMatchObject({ status: "authorized", amount_captured: 0 });
      const captured = await expectPayment(await ctx.client.capture({ payment_id: authorized.id }, { "idempotency-key": "capture-500" }), 200);
      expect(captured).toMatchObject({ status: "succeeded", amount_captured: 900 });
      expect(processor.chargeOf(ctx.fake, authorized.connector_transaction_id)).toMatchObject({ state: "captured", captured: 900 });
    });
  });

  describe("credentials", () => {
    it("uses a credential rotated with `paygate secrets put` on the very next call", async () => {
      const token = await ctx.token();
      const beforeRotation = ctx.fake.requests.length;
      const authorized = await expectPayment(await ctx.client.authorize({ amount: 1200, gateway_token: token, capture_method: "manual" }), 201);
      const old = ctx.since(beforeRotation);
      expect(old.length).toBeGreaterThan(0);
      for (const request of old) expect(processor.credentialSent(request)).toBe(processor.credentialOf(0));

      const put = await runCli(["secrets", "put", ctx.secretPath, "--data", ctx.server.dataDir, "--json"], { input: processor.secrets[1] });
      expect(put.code, put.stderr).toBe(0);
      expect(JSON.parse(put.stdout)).toMatchObject({ path: ctx.secretPath, version: 2 });
      expect(put.stdout + put.stderr).not.toContain(processor.credentialOf(1));

      const afterRotation = ctx.fake.requests.length;
      await expectPayment(await ctx.client.capture({ payment_id: authorized.id }), 200);
      await expectPayment(await ctx.client.sale({ amount: 1300, gateway_token: token }), 201);
      const rotated = ctx.since(afterRotation);
      expect(rotated.length).toBeGreaterThanOrEqual(2);
      for (const request of rotated) expect(processor.credentialSent(request)).toBe(processor.credentialOf(1));
    });
  });

  describe(`${processor.id} specifics`, specifics);

  describe("what leaves paygate (over every request of this file)", () => {
    it("sends card data only in authorize and sale, and never a CVC", async () => {
      const numbers = [LIVE_CARD, ...Object.values(TEST_CARDS)];
      const requests = ctx.fake.requests;
      expect(requests.filter(processor.isCharge).length).toBeGreaterThan(5);
      expect(requests.filter((request) => !processor.isCharge(request)).length).toBeGreaterThan(5);
      for (const request of requests) {
        expect(request.raw).not.toMatch(/cvc|cvv/i);
        if (processor.isCharge(request)) {
          expect(numbers).toContain(processor.cardNumberIn(request));
        } else {
          for (const number of numbers) expect(request.raw, `${request.method} ${request.path}`).not.toContain(number);
        }
      }
    });

    it("logs no card number, no CVC and no credential value", () => {
      const log = ctx.server.readLog();
      const lines = log.split("\n").filter(Boolean);
      expect(lines.length).toBeGreaterThan(20);
      for (const number of [LIVE_CARD, ...Object.values(TEST_CARDS)]) {
        expect(log).not.toContain(number);
        expect(log).not.toContain(number.slice(0, 12)); // no partly masked number either
      }
      for (const value of processor.secretValues) expect(log).not.toContain(value);
      for (const line of lines) {
        const values = stringsOf(JSON.parse(line));
        expect(values).not.toContain(CVC);
      }
      expect(log).not.toMatch(/"cvc"\s*:\s*"?\d/);
    });
  });
}
