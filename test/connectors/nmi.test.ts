import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallContext, ChargeRequest } from "../../server/connectors/connector";
import { nmiConnector } from "../../server/connectors/nmi";
import { ccexp, chargeParams, findEarlierAttempt, nmiDeclineCode, readTransactAnswer, refundOrderId, refundParams } from "../../server/connectors/nmi/wire";
import { TEST_CARDS, type RecordedRequest } from "../fakes/http-fake";
import { QUERY_PATH, TRANSACT_PATH, startNmiFake, type NmiFake } from "../fakes/nmi-fake";
import { approvedId, requestBuilders, storeInDoubt } from "./requests";
import { futureExpiry } from "../support/expiry";

const SECURITY_KEY = "6457Thfj624V5r7WUwc5v6a68Zsd6YEm";

let fake: NmiFake;
const { charge, followOn } = requestBuilders("nmi");

let ledger: Awaited<ReturnType<typeof storeInDoubt>>;
beforeAll(async () => {
  ledger = await storeInDoubt("nmi");
  fake = await startNmiFake();
});
afterAll(async () => {
  await fake.close();
  await ledger.close();
});

function ctx(timeoutMs = 5_000): CallContext {
  return { credential: nmiConnector.parseCredential(SECURITY_KEY), baseUrl: fake.baseUrl, timeoutMs, inDoubt: ledger.inDoubt };
}

const isTransact = (request: RecordedRequest) => request.path === TRANSACT_PATH;

describe("nmi connector against the fake", () => {
  it("looks the reference up, sends an auth, then captures part of it", async () => {
    const req = charge();
    const first = fake.requests.length;
    const transactionId = approvedId(await nmiConnector.authorize(req, ctx()));

    const [query, auth] = fake.requests.slice(first);
    expect(query?.path).toBe(QUERY_PATH);
    expect(query?.body).toEqual({ security_key: SECURITY_KEY, order_id: req.reference });
    expect(auth?.path).toBe(TRANSACT_PATH);
    expect(auth?.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(auth?.body).toEqual({
      security_key: SECURITY_KEY,
      type: "auth",
      amount: "10.50",
      currency: "USD",
      ccnumber: TEST_CARDS.approve,
      ccexp: `04${String(futureExpiry().exp_year % 100).padStart(2, "0")}`,
      orderid: req.reference,
    });

    expect(await nmiConnector.capture(followOn(transactionId, 700), ctx())).toEqual({ outcome: "approved", transactionId });
    expect(fake.requests.at(-1)?.body).toEqual({ security_key: SECURITY_KEY, type: "capture", transactionid: transactionId, amount: "7.00" });
    expect(fake.charges.find((transaction) => transaction.transactionId === transactionId)).toMatchObject({ condition: "pendingsettlement", capturedAmount: 7000 });
  });

  it("sends a sale when capture is requested", async () => {
    const transactionId = approvedId(await nmiConnector.authorize(charge({ capture: true }), ctx()));
    expect(fake.requests.at(-1)?.body.type).toBe("sale");
    expect(fake.charges.find((transaction) => transaction.transactionId === transactionId)?.type).toBe("sale");
  });

  it.each([
    ["generic_decline", TEST_CARDS.generic_decline],
    ["insufficient_funds", TEST_CARDS.insufficient_funds],
    ["expired_card", TEST_CARDS.expired_card],
    ["incorrect_cvc", TEST_CARDS.incorrect_cvc],
  ])("reports a %s decline", async (code, number) => {
    const result = await nmiConnector.authorize(charge({ card: { number, expMonth: 4, expYear: futureExpiry().exp_year } }), ctx());
    expect(result).toMatchObject({ outcome: "declined", code });
    expect(JSON.stringify(result)).not.toContain(number);
  });

  it("re-sends after a decline: only successful attempts stop a charge", async () => {
    const req = charge({ card: { number: TEST_CARDS.insufficient_funds, expMonth: 4, expYear: futureExpiry().exp_year } });
    await nmiConnector.authorize(req, ctx());
    expect(await nmiConnector.authorize(req, ctx())).toMatchObject({ outcome: "declined", code: "insufficient_funds" });
    expect(fake.transactions.filter((transaction) => transaction.orderId === req.reference)).toHaveLength(2);
  });

  it("refunds part of a sale under its own order id", async () => {
    const saleId = approvedId(await nmiConnector.authorize(charge({ amount: 1000, capture: true }), ctx()));
    const refund = followOn(saleId, 400);
    const refundId = approvedId(await nmiConnector.refund(refund, ctx()));
    expect(refundId).not.toBe(saleId);
    expect(fake.requests.at(-2)?.body).toEqual({ security_key: SECURITY_KEY, order_id: refundOrderId(refund) });
    expect(fake.requests.at(-1)?.body).toEqual({ security_key: SECURITY_KEY, type: "refund", transactionid: saleId, amount: "4.00", orderid: refundOrderId(refund) });
    expect(fake.charges.find((transaction) => transaction.transactionId === saleId)?.refundedAmount).toBe(4000);
  });

  it("voids an authorization", async () => {
    const transactionId = approvedId(await nmiConnector.authorize(charge(), ctx()));
    expect(await nmiConnector.void(followOn(transactionId, 1050), ctx())).toEqual({ outcome: "approved", transactionId });
    expect(fake.requests.at(-1)?.body).toEqual({ security_key: SECURITY_KEY, type: "void", transactionid: transactionId });
    expect(fake.charges.find((transaction) => transaction.transactionId === transactionId)?.condition).toBe("canceled");
  });

  it("times out, and a retry with the same reference finds the charge instead of making another", async () => {
    const req = charge({ capture: true });
    fake.failNext("hang", 1, isTransact);
    expect(await nmiConnector.authorize(req, ctx(150))).toEqual({ outcome: "timeout" });

    const transactionId = approvedId(await nmiConnector.authorize(req, ctx()));
    const made = fake.charges.filter((transaction) => transaction.orderId === req.reference);
    expect(made).toHaveLength(1);
    expect(made[0]?.transactionId).toBe(transactionId);
    expect(fake.requests.filter((request) => isTransact(request) && request.body.orderid === req.reference)).toHaveLength(1);
  });

  it("times out on a refund, and the retry finds it instead of refunding twice", async () => {
    const saleId = approvedId(await nmiConnector.authorize(charge({ amount: 1000, capture: true }), ctx()));
    const refund = followOn(saleId, 300);
    fake.failNext("hang", 1, isTransact);
    expect(await nmiConnector.refund(refund, ctx(150))).toEqual({ outcome: "timeout" });
    const refundId = approvedId(await nmiConnector.refund(refund, ctx()));
    expect(fake.transactions.find((transaction) => transaction.orderId === refundOrderId(refund))?.transactionId).toBe(refundId);
    expect(fake.charges.find((transaction) => transaction.transactionId === saleId)?.refundedAmount).toBe(3000);
  });

  it("refunds another payment under a reused reference instead of answering the first payment's refund", async () => {
    const firstSale = approvedId(await nmiConnector.authorize(charge({ amount: 1000, capture: true }), ctx()));
    const secondSale = approvedId(await nmiConnector.authorize(charge({ amount: 1000, capture: true }), ctx()));
    // Same Idempotency-Key (so the same reference) after its record expired, another payment.
    const first = { ...followOn(firstSale, 300), reference: "ref-nmi-reused", paymentId: "pay_nmi_first" };
    const second = { ...followOn(secondSale, 300), reference: "ref-nmi-reused", paymentId: "pay_nmi_second" };
    const firstRefund = approvedId(await nmiConnector.refund(first, ctx()));
    const secondRefund = approvedId(await nmiConnector.refund(second, ctx()));
    expect(secondRefund).not.toBe(firstRefund);
    expect(fake.charges.find((transaction) => transaction.transactionId === secondSale)?.refundedAmount).toBe(3000);
  });

  it("does not charge when the look-up fails or times out", async () => {
    const before = fake.requests.filter(isTransact).length;
    fake.failNext("500", 1, (request) => request.path === QUERY_PATH);
    expect(await nmiConnector.authorize(charge(), ctx())).toMatchObject({ outcome: "error", code: "processor_error" });
    fake.failNext("malformed", 1, (request) => request.path === QUERY_PATH);
    expect(await nmiConnector.authorize(charge(), ctx())).toMatchObject({ outcome: "error", code: "processor_error" });
    fake.failNext("hang", 1, (request) => request.path === QUERY_PATH);
    expect(await nmiConnector.authorize(charge(), ctx(150))).toEqual({ outcome: "timeout" });
    expect(fake.requests.filter(isTransact).length).toBe(before);
  });

  it("maps a 500 and a malformed transact answer to processor_error", async () => {
    fake.failNext("500", 1, isTransact);
    expect(await nmiConnector.authorize(charge(), ctx())).toMatchObject({ outcome: "error", code: "processor_error" });
    fake.failNext("malformed", 1, isTransact);
    expect(await nmiConnector.authorize(charge(), ctx())).toMatchObject({ outcome: "error", code: "processor_error" });
  });

  it("maps response=3 to processor_error", async () => {
    expect(await nmiConnector.capture(followOn("999", 100), ctx())).toMatchObject({ outcome: "error", code: "processor_error" });
  });

  it("sends card data only in sale and auth", async () => {
    const first = fake.requests.length;
    const authId = approvedId(await nmiConnector.authorize(charge(), ctx()));
    await nmiConnector.capture(followOn(authId, 1050), ctx());
    const saleId = approvedId(await nmiConnector.authorize(charge({ capture: true }), ctx()));
    await nmiConnector.refund(followOn(saleId, 100), ctx());
    const voidId = approvedId(await nmiConnector.authorize(charge(), ctx()));
    await nmiConnector.void(followOn(voidId, 1050), ctx());

    const made = fake.requests.slice(first);
    expect(made).toHaveLength(10); // three charges and one refund each add a query
    for (const request of made) {
      const isCharge = isTransact(request) && (request.body.type === "sale" || request.body.type === "auth");
      expect(request.raw.includes(TEST_CARDS.approve)).toBe(isCharge);
    }
  });
});

describe("nmi credentials", () => {
  it("takes the security key as a plain string", () => {
    expect(nmiConnector.parseCredential(SECURITY_KEY)).toEqual({ security_key: SECURITY_KEY });
  });

  it.each([
    ["an empty string", ""],
    ["a key with spaces", "SECRETVALUE 123"],
    ["a JSON object", JSON.stringify({ security_key: "SECRETVALUE123" })],
  ])("rejects %s without quoting it", (_, raw) => {
    let message = "";
    try {
      nmiConnector.parseCredential(raw);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).not.toBe("");
    expect(message).not.toContain("SECRETVALUE");
  });
});

describe("nmi wire mapping", () => {
  it("sends decimal amounts, whole units for zero-decimal currencies", () => {
    const params = (req: ChargeRequest) => new Map(chargeParams(req, "key"));
    expect(params(charge({ amount: 1050 })).get("amount")).toBe("10.50");
    expect(params(charge({ amount: 500, currency: "jpy" })).get("amount")).toBe("500");
    expect(params(charge({ amount: 500, currency: "jpy" })).get("currency")).toBe("JPY");
    expect(new Map(refundParams({ ...followOn("1", 1234), currency: "bhd" }, "key")).get("amount")).toBe("1.234");
  });

  it("formats the expiry as MMYY", () => {
    expect(ccexp(1, 2030)).toBe("0130");
    expect(ccexp(11, 2029)).toBe("1129");
  });

  it("maps NMI result codes, defaulting to generic_decline", () => {
    expect(nmiDeclineCode("200")).toBe("generic_decline");
    expect(nmiDeclineCode("201")).toBe("do_not_honor");
    expect(nmiDeclineCode("202")).toBe("insufficient_funds");
    expect(nmiDeclineCode("204")).toBe("card_not_supported");
    expect(nmiDeclineCode("223")).toBe("expired_card");
    expect(nmiDeclineCode("225")).toBe("incorrect_cvc");
    expect(nmiDeclineCode("252")).toBe("stolen_card");
    expect(nmiDeclineCode("261")).toBe("generic_decline");
  });

  it("reads Direct Post answers", () => {
    expect(readTransactAnswer(200, "response=1&responsetext=SUCCESS&transactionid=42&response_code=100")).toEqual({ outcome: "approved", transactionId: "42" });
    expect(readTransactAnswer(200, "response=1&responsetext=SUCCESS")).toMatchObject({ outcome: "error" });
    expect(readTransactAnswer(200, "response=2&responsetext=Card+4000000000000002+declined&response_code=201")).toEqual({
      outcome: "declined",
      code: "do_not_honor",
      message: "Card [redacted] declined",
    });
    expect(readTransactAnswer(200, "response=3&responsetext=Authentication+Failed&response_code=300")).toMatchObject({ outcome: "error", code: "processor_error" });
    expect(readTransactAnswer(200, "<html>oops</html>")).toMatchObject({ outcome: "error", code: "processor_error" });
  });

  it("finds only a successful action under exactly our order id, for our amount", () => {
    const xml = (orderId: string, success: string, amount = "10.50") =>
      `<nm_response><transaction><transaction_id>55</transaction_id><order_id>${orderId}</order_id>` +
      `<action><amount>${amount}</amount><action_type>sale</action_type><success>${success}</success></action></transaction></nm_response>`;
    const find = (body: string) => findEarlierAttempt(200, body, "ref-1", ["sale"], 1050, "usd");
    expect(find(xml("ref-1", "1"))).toEqual({ kind: "found", result: { outcome: "approved", transactionId: "55" } });
    expect(find(xml("ref-1", "0"))).toEqual({ kind: "none" });
    expect(find(xml("ref-10", "1"))).toEqual({ kind: "none" });
    expect(find(xml("ref-1", "1", "99.00"))).toMatchObject({ kind: "found", result: { outcome: "error" } });
    expect(find("<nm_response></nm_response>")).toEqual({ kind: "none" });
    expect(find("<nm_response><error_response>Invalid Security Key</error_response></nm_response>")).toMatchObject({ kind: "unreadable" });
    expect(find("<html>oops</html>")).toMatchObject({ kind: "unreadable" });
    expect(findEarlierAttempt(200, xml("ref-1", "1", "500"), "ref-1", ["sale"], 500, "jpy")).toMatchObject({ kind: "found", result: { outcome: "approved" } });
  });
});
