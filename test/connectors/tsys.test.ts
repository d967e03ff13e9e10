import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CallContext } from "../../server/connectors/connector";
import { tsysConnector } from "../../server/connectors/tsys";
import { chargeRequest, expirationDate, followOnRequest, readAnswer, tsysDeclineCode, voidRequest } from "../../server/connectors/tsys/wire";
import { TEST_CARDS } from "../fakes/http-fake";
import { TRANSIT_PATH, startTsysFake, type TsysFake } from "../fakes/tsys-fake";
import { approvedId, requestBuilders, storeInDoubt } from "./requests";
import { futureExpiry } from "../support/expiry";

const SECRET = JSON.stringify({ device_id: "88500000322601", transaction_key: "TXNKEYSECRET0123456789" });

let fake: TsysFake;
const { charge, followOn } = requestBuilders("tsys");

let ledger: Awaited<ReturnType<typeof storeInDoubt>>;
beforeAll(async () => {
  ledger = await storeInDoubt("tsys");
  fake = await startTsysFake();
});
afterAll(async () => {
  await fake.close();
  await ledger.close();
});

function ctx(timeoutMs = 5_000): CallContext {
  return { credential: tsysConnector.parseCredential(SECRET), baseUrl: fake.baseUrl, timeoutMs, inDoubt: ledger.inDoubt };
}

function lastBody(): Record<string, unknown> {
  return fake.requests.at(-1)?.body ?? {};
}

describe("tsys connector against the fake", () => {
  it("sends an Auth, then captures part of it", async () => {
    const req = charge();
    const transactionId = approvedId(await tsysConnector.authorize(req, ctx()));
    expect(fake.requests.at(-1)?.path).toBe(TRANSIT_PATH);
    expect(lastBody().Auth).toMatchObject({
      deviceID: "88500000322601",
      transactionKey: "TXNKEYSECRET0123456789",
      cardDataSource: "INTERNET",
      transactionAmount: "10.50",
      currencyCode: "USD",
      cardNumber: TEST_CARDS.approve,
      expirationDate: `04${String(futureExpiry().exp_year % 100).padStart(2, "0")}`,
      orderNumber: req.reference,
      externalReferenceID: req.paymentId,
    });
    expect(lastBody().Auth).not.toHaveProperty("developerID");

    expect(await tsysConnector.capture(followOn(transactionId, 700), ctx())).toEqual({ outcome: "approved", transactionId });
    expect(lastBody()).toEqual({
      Capture: { deviceID: "88500000322601", transactionKey: "TXNKEYSECRET0123456789", transactionAmount: "7.00", transactionID: transactionId },
    });
    expect(fake.charges.find((transaction) => transaction.transactionId === transactionId)).toMatchObject({ status: "captured", capturedAmount: 7000 });
  });

  it("sends a Sale when capture is requested", async () => {
    const transactionId = approvedId(await tsysConnector.authorize(charge({ capture: true }), ctx()));
    expect(lastBody()).toHaveProperty("Sale");
    expect(fake.charges.find((transaction) => transaction.transactionId === transactionId)).toMatchObject({ kind: "Sale", status: "captured" });
  });

  it.each([
    ["generic_decline", TEST_CARDS.generic_decline],
    ["insufficient_funds", TEST_CARDS.insufficient_funds],
    ["expired_card", TEST_CARDS.expired_card],
    ["incorrect_cvc", TEST_CARDS.incorrect_cvc],
  ])("reports a %s decline", async (code, number) => {
    const result = await tsysConnector.authorize(charge({ card: { number, expMonth: 4, expYear: futureExpiry().exp_year } }), ctx());
    expect(result).toMatchObject({ outcome: "declined", code });
    expect(JSON.stringify(result)).not.toContain(number);
  });

  it("reports a gateway refusal without an issuer code as processing_error", async () => {
    expect(await tsysConnector.capture(followOn("123", 100), ctx())).toMatchObject({ outcome: "declined", code: "processing_error" });
  });

  it("returns part of a sale", async () => {
    const saleId = approvedId(await tsysConnector.authorize(charge({ amount: 1000, capture: true }), ctx()));
    const returnId = approvedId(await tsysConnector.refund(followOn(saleId, 400), ctx()));
    expect(returnId).not.toBe(saleId);
    expect(lastBody()).toMatchObject({ Return: { transactionAmount: "4.00", transactionID: saleId } });
    expect(fake.charges.find((transaction) => transaction.transactionId === saleId)?.returnedAmount).toBe(4000);
  });

  it("voids an authorization", async () => {
    const transactionId = approvedId(await tsysConnector.authorize(charge(), ctx()));
    expect(await tsysConnector.void(followOn(transactionId, 1050), ctx())).toEqual({ outcome: "approved", transactionId });
    expect(lastBody()).toEqual({ Void: { deviceID: "88500000322601", transactionKey: "TXNKEYSECRET0123456789", transactionID: transactionId } });
    expect(fake.charges.find((transaction) => transaction.transactionId === transactionId)?.status).toBe("voided");
  });

  it("never re-sends a charge whose answer was lost: the retry stays a timeout", async () => {
    const req = charge({ capture: true });
    fake.failNext("hang");
    expect(await tsysConnector.authorize(req, ctx(150))).toEqual({ outcome: "timeout" });
    expect(await tsysConnector.authorize(req, ctx())).toEqual({ outcome: "timeout" });

    expect(fake.charges.filter((transaction) => transaction.orderNumber === req.reference)).toHaveLength(1);
    expect(fake.requests.filter((request) => request.raw.includes(`"orderNumber":"${req.reference}"`))).toHaveLength(1);
  });

  it("never re-sends a Return whose answer was lost", async () => {
    const saleId = approvedId(await tsysConnector.authorize(charge({ amount: 1000, capture: true }), ctx()));
    const refund = followOn(saleId, 300);
    fake.failNext("hang");
    expect(await tsysConnector.refund(refund, ctx(150))).toEqual({ outcome: "timeout" });
    expect(await tsysConnector.refund(refund, ctx())).toEqual({ outcome: "timeout" });
    expect(fake.charges.find((transaction) => transaction.transactionId === saleId)?.returnedAmount).toBe(3000);
  });

  it("maps a 500 and a malformed body to processor_error", async () => {
    fake.failNext("500");
    expect(await tsysConnector.authorize(charge(), ctx())).toMatchObject({ outcome: "error", code: "processor_error" });
    fake.failNext("malformed");
    expect(await tsysConnector.authorize(charge(), ctx())).toMatchObject({ outcome: "error", code: "processor_error" });
  });

  it("sends card data only in Auth and Sale", async () => {
    const first = fake.requests.length;
    const authId = approvedId(await tsysConnector.authorize(charge(), ctx()));
    await tsysConnector.capture(followOn(authId, 1050), ctx());
    const saleId = approvedId(await tsysConnector.authorize(charge({ capture: true }), ctx()));
    await tsysConnector.refund(followOn(saleId, 100), ctx());
    const voidId = approvedId(await tsysConnector.authorize(charge(), ctx()));
    await tsysConnector.void(followOn(voidId, 1050), ctx());

    const made = fake.requests.slice(first);
    expect(made).toHaveLength(6);
    for (const request of made) {
      const isCharge = "Auth" in request.body || "Sale" in request.body;
      expect(request.raw.includes(TEST_CARDS.approve)).toBe(isCharge);
    }
  });
});

describe("tsys credentials", () => {
  it("accepts device_id and transaction_key, with an optional developer_id", () => {
    expect(tsysConnector.parseCredential(SECRET)).toEqual({ device_id: "88500000322601", transaction_key: "TXNKEYSECRET0123456789" });
    const withDeveloper = tsysConnector.parseCredential(JSON.stringify({ device_id: "1", transaction_key: "k", developer_id: "003386G001" }));
    expect(withDeveloper.developer_id).toBe("003386G001");
  });

  it.each([
    ["not JSON", "TXNKEYSECRETVALUE"],
    ["a missing transaction key", JSON.stringify({ device_id: "TXNKEYSECRETVALUE" })],
    ["a number", JSON.stringify({ device_id: 885, transaction_key: "TXNKEYSECRETVALUE" })],
    ["a key with spaces", JSON.stringify({ device_id: "885", transaction_key: "TXNKEY SECRETVALUE" })],
  ])("rejects %s without quoting it", (_, raw) => {
    let message = "";
    try {
      tsysConnector.parseCredential(raw);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).not.toBe("");
    expect(message).not.toContain("SECRETVALUE");
  });
});

describe("tsys wire mapping", () => {
  const credential = { deviceId: "885", transactionKey: "key", developerId: "003386G001" };

  it("sends decimal amounts, whole units for zero-decimal currencies", () => {
    expect(chargeRequest(charge({ amount: 1050 }), credential).Auth?.transactionAmount).toBe("10.50");
    expect(chargeRequest(charge({ amount: 5, currency: "usd" }), credential).Auth?.transactionAmount).toBe("0.05");
    expect(chargeRequest(charge({ amount: 500, currency: "jpy" }), credential).Auth?.transactionAmount).toBe("500");
    expect(followOnRequest("Return", { ...followOn("9", 1234), currency: "kwd" }, credential).Return?.transactionAmount).toBe("1.234");
  });

  it("sends the developer ID when the credential has one, and no card outside Auth/Sale", () => {
    expect(chargeRequest(charge({ capture: true }), credential).Sale?.developerID).toBe("003386G001");
    expect(voidRequest(followOn("9", 1), credential)).toEqual({ Void: { deviceID: "885", transactionKey: "key", transactionID: "9", developerID: "003386G001" } });
  });

  it("formats the expiry as MMYY", () => {
    expect(expirationDate({ number: "", expMonth: 1, expYear: 2030 })).toBe("0130");
    expect(expirationDate({ number: "", expMonth: 12, expYear: 29 })).toBe("1229");
  });

  it("maps TSYS issuer codes, defaulting to generic_decline", () => {
    expect(tsysDeclineCode("51")).toBe("insufficient_funds");
    expect(tsysDeclineCode("54")).toBe("expired_card");
    expect(tsysDeclineCode("N7")).toBe("incorrect_cvc");
    expect(tsysDeclineCode("05")).toBe("do_not_honor");
    expect(tsysDeclineCode("43")).toBe("stolen_card");
    expect(tsysDeclineCode("01")).toBe("generic_decline");
  });

  it("reads answers by status", () => {
    const answer = (body: Record<string, unknown>) => JSON.stringify({ SaleResponse: body });
    expect(readAnswer("Sale", 200, answer({ status: "PASS", responseCode: "A0000", transactionID: "77" }))).toEqual({ outcome: "approved", transactionId: "77" });
    expect(readAnswer("Sale", 200, answer({ status: "PASS" }))).toMatchObject({ outcome: "error" });
    expect(readAnswer("Sale", 200, answer({ status: "FAIL", hostResponseCode: "51", responseMessage: "NSF" }))).toMatchObject({ outcome: "declined", code: "insufficient_funds" });
    expect(readAnswer("Sale", 200, answer({ status: "MAYBE" }))).toMatchObject({ outcome: "error" });
    expect(readAnswer("Auth", 200, answer({ status: "PASS", transactionID: "77" }))).toMatchObject({ outcome: "error" });
    expect(readAnswer("Sale", 404, "")).toMatchObject({ outcome: "error" });
  });
});
