/**
 * A fake TSYS TransIT gateway for tests: real HTTP on 127.0.0.1, TransIT's JSON format.
 *
 *   const tsys = await startTsysFake();
 *   // point the tsys account's base URL at tsys.baseUrl; any non-empty deviceID/transactionKey works
 *   tsys.charges     // approved Auth/Sale transactions, updated by Capture/Return/Void
 *   tsys.requests    // every request: method, path, headers, parsed JSON body, raw body
 *   tsys.failNext("hang", 1)   // see http-fake.ts for "500" | "malformed" | "hang"
 *   await tsys.close()
 *
 * One endpoint, POST /servlets/TransNox_API_Server, body `{"<Transaction>": {...}}` for
 * Auth, Sale, Capture, Return and Void; answer `{"<Transaction>Response": {...}}` with
 * status PASS/FAIL, responseCode (A0000 on approval), responseMessage, transactionID and the
 * issuer's hostResponseCode. Test-card declines carry the TSYS issuer codes paygate maps:
 * 01 (refer to issuer: generic), 51 (insufficient funds), 54 (expired card), 82 (CVV incorrect).
 * TransIT's own decline `responseCode` values are not in the public sources used, so the fake
 * answers placeholders (D0051...) and gateway refusals (unknown transaction, bad amount) FAIL
 * with a placeholder code and no hostResponseCode.
 * TransIT has no idempotency and no look-up by merchant reference; neither does the fake.
 */
import { declineClassOf, field, last4, startFakeServer, type DeclineClass, type FakeReply, type FakeServer } from "./http-fake";

export const TRANSIT_PATH = "/servlets/TransNox_API_Server";

export interface TsysFakeTransaction {
  transactionId: string;
  kind: "Auth" | "Sale";
  /** Amounts in thousandths of the currency unit, so any exponent compares exactly. */
  amount: number;
  capturedAmount: number;
  returnedAmount: number;
  status: "authorized" | "captured" | "voided";
  currencyCode: string | undefined;
  orderNumber: string | undefined;
  externalReferenceID: string | undefined;
  cardLast4: string;
}

export interface TsysFake extends FakeServer {
  charges: TsysFakeTransaction[];
}

const HOST_DECLINES: Record<DeclineClass, { host: string; message: string }> = {
  generic_decline: { host: "01", message: "Refer to card issuer" },
  insufficient_funds: { host: "51", message: "Insufficient funds" },
  expired_card: { host: "54", message: "Expired card" },
  incorrect_cvc: { host: "82", message: "CVV data is not correct" },
};

const KINDS = ["Auth", "Sale", "Capture", "Return", "Void"] as const;
type Kind = (typeof KINDS)[number];

export async function startTsysFake(): Promise<TsysFake> {
  const charges: TsysFakeTransaction[] = [];
  let nextId = 90000001;

  function handle(kind: Kind, body: Record<string, unknown>): Record<string, unknown> {
    if (!field(body, "deviceID") || !field(body, "transactionKey")) return refuse("F0001", "Invalid device credentials");
    switch (kind) {
      case "Auth":
      case "Sale":
        return charge(kind, body);
      case "Capture":
        return capture(body);
      case "Return":
        return giveBack(body);
      case "Void":
        return voidTransaction(body);
    }
  }

  function charge(kind: "Auth" | "Sale", body: Record<string, unknown>): Record<string, unknown> {
    const amount = thousandths(field(body, "transactionAmount"));
    const number = field(body, "cardNumber");
    if (amount === undefined || !number || !/^\d{4}$/.test(field(body, "expirationDate") ?? "")) return refuse("F0002", "Invalid transaction data");
    const decline = declineClassOf(number);
    if (decline) {
      const { host, message } = HOST_DECLINES[decline];
      return { status: "FAIL", responseCode: `D00${host}`, responseMessage: message, hostResponseCode: host };
    }
    const transaction: TsysFakeTransaction = {
      transactionId: String(nextId++),
      kind,
      amount,
      capturedAmount: kind === "Sale" ? amount : 0,
      returnedAmount: 0,
      status: kind === "Sale" ? "captured" : "authorized",
      currencyCode: field(body, "currencyCode"),
      orderNumber: field(body, "orderNumber"),
      externalReferenceID: field(body, "externalReferenceID"),
      cardLast4: last4(number),
    };
    charges.push(transaction);
    return pass(transaction.transactionId, field(body, "transactionAmount"), {
      orderNumber: transaction.orderNumber,
      externalReferenceID: transaction.externalReferenceID,
      maskedCardNumber: transaction.cardLast4,
    });
  }

  function capture(body: Record<string, unknown>): Record<string, unknown> {
    const transaction = find(body);
    const amount = thousandths(field(body, "transactionAmount"));
    if (!transaction || transaction.kind !== "Auth" || transaction.status !== "authorized") return refuse("F0003", "Transaction cannot be captured");
    if (amount === undefined || amount > transaction.amount) return refuse("F0004", "Invalid capture amount");
    transaction.status = "captured";
    transaction.capturedAmount = amount;
    return pass(transaction.transactionId, field(body, "transactionAmount"));
  }

  function giveBack(body: Record<string, unknown>): Record<string, unknown> {
    const transaction = find(body);
    const amount = thousandths(field(body, "transactionAmount"));
    if (!transaction || transaction.status !== "captured") return refuse("F0003", "Transaction cannot be returned");
    if (amount === undefined || amount > transaction.capturedAmount - transaction.returnedAmount) return refuse("F0004", "Invalid return amount");
    transaction.returnedAmount += amount;
    return pass(String(nextId++), field(body, "transactionAmount"));
  }

  function voidTransaction(body: Record<string, unknown>): Record<string, unknown> {
    const transaction = find(body);
    if (!transaction || transaction.status === "voided") return refuse("F0003", "Transaction cannot be voided");
    transaction.status = "voided";
    return pass(transaction.transactionId, undefined);
  }

  function find(body: Record<string, unknown>): TsysFakeTransaction | undefined {
    return charges.find((transaction) => transaction.transactionId === field(body, "transactionID"));
  }

  const fake = await startFakeServer({
    malformed: { status: 200, contentType: "text/html", body: "<html><body>Service Unavailable</body></html>" },
    handle(request): FakeReply {
      if (request.method !== "POST" || request.path !== TRANSIT_PATH) return { status: 404, contentType: "text/plain", body: "Not Found" };
      const kind = KINDS.find((candidate) => candidate in request.body);
      const inner = kind && request.body[kind];
      if (!kind || typeof inner !== "object" || inner === null) return { status: 400, contentType: "text/plain", body: "Unknown transaction" };
      const answer = handle(kind, inner as Record<string, unknown>);
      return { status: 200, contentType: "application/json", body: JSON.stringify({ [`${kind}Response`]: answer }) };
    },
  });
  return { ...fake, charges };
}

function pass(transactionId: string, amount: string | undefined, extra: Record<string, string | undefined> = {}): Record<string, unknown> {
  return {
    status: "PASS",
    responseCode: "A0000",
    responseMessage: "Success",
    authCode: "TAS123",
    hostResponseCode: "00",
    transactionID: transactionId,
    transactionTimestamp: new Date().toISOString().slice(0, 19),
    transactionAmount: amount,
    ...extra,
  };
}

function refuse(responseCode: string, responseMessage: string): Record<string, unknown> {
  return { status: "FAIL", responseCode, responseMessage };
}

function thousandths(amount: string | undefined): number | undefined {
  if (!amount || !/^\d+(\.\d{1,3})?$/.test(amount)) return undefined;
  return Math.round(Number(amount) * 1000);
}
