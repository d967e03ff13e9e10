/**
 * A fake NMI gateway for tests: real HTTP on 127.0.0.1, NMI's Direct Post and Query API formats.
 *
 *   const nmi = await startNmiFake();
 *   // point the nmi account's base URL at nmi.baseUrl; any non-empty security_key works
 *   nmi.charges        // approved sale/auth transactions, updated by capture/void/refund
 *   nmi.transactions   // every transaction NMI would keep: declined attempts and refunds too
 *   nmi.requests       // every request: method, path, headers, parsed form body, raw body
 *   nmi.failNext("hang", 1, (r) => r.path === "/api/transact.php")   // see http-fake.ts
 *   await nmi.close()
 *
 * POST /api/transact.php (form: security_key, type=sale|auth|capture|refund|void, amount,
 * ccnumber, ccexp, orderid, transactionid) answers form-encoded `response` 1/2/3,
 * `responsetext`, `transactionid`, `orderid`, `type`, `response_code`. Test-card declines use
 * NMI result codes 200 (declined by processor), 202 (insufficient funds), 223 (expired card),
 * 225 (invalid card security code); refusals (unknown transaction, bad amount) answer
 * response=3 / 300. A refund is a transaction of its own, carrying the orderid it was sent with.
 * POST /api/query.php (form: security_key, order_id and/or transaction_id) answers
 * `<nm_response>` XML with every transaction under exactly that order id (and with that id) and
 * its `<action>`s (amount, action_type, success), which is how NMI lets a client find an
 * attempt whose answer it never got.
 */
import { declineClassOf, field, last4, startFakeServer, type DeclineClass, type FakeReply, type FakeServer } from "./http-fake";

export const TRANSACT_PATH = "/api/transact.php";
export const QUERY_PATH = "/api/query.php";

export interface NmiFakeAction {
  actionType: "sale" | "auth" | "capture" | "void" | "refund";
  amount: string;
  success: boolean;
  responseCode: string;
}

export interface NmiFakeTransaction {
  transactionId: string;
  type: "sale" | "auth" | "refund";
  orderId: string | undefined;
  originalTransactionId: string | undefined;
  /** Thousandths of the currency unit, so any exponent compares exactly. */
  amount: number;
  capturedAmount: number;
  refundedAmount: number;
  currency: string | undefined;
  condition: "pending" | "pendingsettlement" | "canceled" | "failed";
  cardLast4: string;
  actions: NmiFakeAction[];
}

export interface NmiFake extends FakeServer {
  charges: NmiFakeTransaction[];
  transactions: NmiFakeTransaction[];
}

const RESULT_CODES: Record<DeclineClass, { code: string; text: string }> = {
  generic_decline: { code: "200", text: "DECLINE" },
  insufficient_funds: { code: "202", text: "Insufficient funds" },
  expired_card: { code: "223", text: "Expired card" },
  incorrect_cvc: { code: "225", text: "Invalid card security code" },
};

export async function startNmiFake(): Promise<NmiFake> {
  const transactions: NmiFakeTransaction[] = [];
  const charges: NmiFakeTransaction[] = [];
  let nextId = 7000000001;

  function transact(body: Record<string, unknown>): Record<string, string> {
    const type = field(body, "type");
    switch (type) {
      case "sale":
      case "auth":
        return charge(type, body);
      case "capture":
        return capture(body);
      case "refund":
        return refund(body);
      case "void":
        return voidTransaction(body);
      default:
        return refuse(type, "Invalid transaction type");
    }
  }

  function charge(type: "sale" | "auth", body: Record<string, unknown>): Record<string, string> {
    const amountText = field(body, "amount");
    const amount = thousandths(amountText);
    const number = field(body, "ccnumber");
    if (amount === undefined || !amountText || !number || !/^\d{4}$/.test(field(body, "ccexp") ?? "")) return refuse(type, "Invalid transaction data");
    const decline = declineClassOf(number);
    const transaction: NmiFakeTransaction = {
      transactionId: String(nextId++),
      type,
      orderId: field(body, "orderid"),
      originalTransactionId: undefined,
      amount,
      capturedAmount: type === "sale" && !decline ? amount : 0,
      refundedAmount: 0,
      currency: field(body, "currency"),
      condition: decline ? "failed" : type === "sale" ? "pendingsettlement" : "pending",
      cardLast4: last4(number),
      actions: [{ actionType: type, amount: amountText, success: !decline, responseCode: decline ? RESULT_CODES[decline].code : "100" }],
    };
    transactions.push(transaction);
    if (decline) {
      const { code, text } = RESULT_CODES[decline];
      return answer("2", text, code, type, transaction);
    }
    charges.push(transaction);
    return answer("1", "SUCCESS", "100", type, transaction);
  }

  function capture(body: Record<string, unknown>): Record<string, string> {
    const transaction = find(body);
    const amountText = field(body, "amount");
    const amount = thousandths(amountText);
    if (!transaction || transaction.type !== "auth" || transaction.condition !== "pending") return refuse("capture", "Transaction not found or not capturable");
    if (amount === undefined || !amountText || amount > transaction.amount) return refuse("capture", "Invalid capture amount");
    transaction.capturedAmount = amount;
    transaction.condition = "pendingsettlement";
    transaction.actions.push({ actionType: "capture", amount: amountText, success: true, responseCode: "100" });
    return answer("1", "SUCCESS", "100", "capture", transaction);
  }

  function refund(body: Record<string, unknown>): Record<string, string> {
    const original = find(body);
    const amountText = field(body, "amount");
    const amount = thousandths(amountText);
    if (!original || original.capturedAmount === 0 || original.condition === "canceled") return refuse("refund", "Transaction not found or not refundable");
    if (amount === undefined || !amountText || amount > original.capturedAmount - original.refundedAmount) return refuse("refund", "Refund amount may not exceed the transaction balance");
    original.refundedAmount += amount;
    const transaction: NmiFakeTransaction = {
      transactionId: String(nextId++),
      type: "refund",
      orderId: field(body, "orderid"),
      originalTransactionId: original.transactionId,
      amount,
      capturedAmount: 0,
      refundedAmount: 0,
      currency: original.currency,
      condition: "pendingsettlement",
      cardLast4: original.cardLast4,
      actions: [{ actionType: "refund", amount: amountText, success: true, responseCode: "100" }],
    };
    transactions.push(transaction);
    return answer("1", "SUCCESS", "100", "refund", transaction);
  }

  function voidTransaction(body: Record<string, unknown>): Record<string, string> {
    const transaction = find(body);
    if (!transaction || transaction.type === "refund" || transaction.condition === "canceled" || transaction.condition === "failed") {
      return refuse("void", "Transaction not found or already voided");
    }
    transaction.condition = "canceled";
    transaction.actions.push({ actionType: "void", amount: "0.00", success: true, responseCode: "100" });
    return answer("1", "Transaction Void Successful", "100", "void", transaction);
  }

  function find(body: Record<string, unknown>): NmiFakeTransaction | undefined {
    return transactions.find((transaction) => transaction.transactionId === field(body, "transactionid"));
  }

  function query(body: Record<string, unknown>): string {
    if (!field(body, "security_key")) return "<nm_response><error_response>Invalid Security Key</error_response></nm_response>";
    const orderId = field(body, "order_id");
    const transactionId = field(body, "transaction_id");
    const matching = transactions.filter(
      (transaction) => (orderId === undefined || transaction.orderId === orderId) && (transactionId === undefined || transaction.transactionId === transactionId),
    );
    return `<?xml version="1.0" encoding="UTF-8"?>\n<nm_response>\n${matching.map(transactionXml).join("")}</nm_response>\n`;
  }

  const fake = await startFakeServer({
    malformed: { status: 200, contentType: "text/html", body: "<html><body>502 Bad Gateway</body></html>" },
    handle(request): FakeReply {
      if (request.method === "POST" && request.path === QUERY_PATH) return { status: 200, contentType: "text/xml", body: query(request.body) };
      if (request.method !== "POST" || request.path !== TRANSACT_PATH) return { status: 404, contentType: "text/plain", body: "Not Found" };
      const reply = field(request.body, "security_key") ? transact(request.body) : refuse(field(request.body, "type"), "Authentication Failed");
      return { status: 200, contentType: "text/html", body: new URLSearchParams(reply).toString() };
    },
  });
  return { ...fake, charges, transactions };
}

function answer(response: string, text: string, code: string, type: string, transaction: NmiFakeTransaction): Record<string, string> {
  return {
    response,
    responsetext: text,
    authcode: response === "1" ? "123456" : "",
    transactionid: transaction.transactionId,
    avsresponse: "",
    cvvresponse: "",
    orderid: transaction.orderId ?? "",
    type,
    response_code: code,
  };
}

function refuse(type: string | undefined, text: string): Record<string, string> {
  return { response: "3", responsetext: `${text} REFID:1234`, authcode: "", transactionid: "", orderid: "", type: type ?? "", response_code: "300" };
}

function transactionXml(transaction: NmiFakeTransaction): string {
  const element = (tag: string, value: string | undefined): string => `<${tag}>${escapeXml(value ?? "")}</${tag}>`;
  const actions = transaction.actions
    .map(
      (action) =>
        `    <action>${element("amount", action.amount)}${element("action_type", action.actionType)}${element("success", action.success ? "1" : "0")}` +
        `${element("response_code", action.responseCode)}${element("response_text", action.success ? "SUCCESS" : "DECLINE")}</action>\n`,
    )
    .join("");
  return (
    "  <transaction>\n" +
    `    ${element("transaction_id", transaction.transactionId)}${element("transaction_type", "cc")}${element("condition", transaction.condition)}\n` +
    `    ${element("order_id", transaction.orderId)}${element("original_transaction_id", transaction.originalTransactionId)}\n` +
    `    ${element("cc_number", `4xxxxxxxxxxx${transaction.cardLast4}`)}${element("currency", transaction.currency)}\n` +
    actions +
    "  </transaction>\n"
  );
}

function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function thousandths(amount: string | undefined): number | undefined {
  if (!amount || !/^\d+(\.\d{1,3})?$/.test(amount)) return undefined;
  return Math.round(Number(amount) * 1000);
}
