/**
 * TSYS TransIT ("Multipass") JSON API: one POST per transaction, the body a single-key
 * object naming the transaction (`{"Sale": {...}}`), the answer named after it
 * (`{"SaleResponse": {...}}`) with `status` PASS/FAIL, `responseCode`, `responseMessage`,
 * `transactionID` and the issuer's `hostResponseCode`.
 * Sources: globalpayments/php-sdk src/Gateways/TransITConnector.php (TSYS's owner's SDK),
 * juspay/hyperswitch crates/hyperswitch_connectors/src/connectors/tsys{.rs,/transformers.rs},
 * TSYS (Vital) host response codes as published by TSYS resellers (see docs/processors.md).
 */
import type { CardData, ChargeRequest, ConnectorCredential, ConnectorResult, FollowOnRequest } from "../connector";
import { toDecimalString } from "../../payments/currency";
import { asObject, parseJsonObject, processorError, scrubMessage, stringField } from "../http-call";

export const TRANSIT_PATH = "/servlets/TransNox_API_Server";

export type TsysTransaction = "Auth" | "Sale" | "Capture" | "Return" | "Void";
export type TsysRequest = Partial<Record<TsysTransaction, Record<string, string>>>;

export interface TsysCredential {
  deviceId: string;
  transactionKey: string;
  /** Issued to the integrator at TransIT certification; sent when present. */
  developerId?: string;
}

const SECRET_SHAPE = 'tsys secret must be a JSON object {"device_id":"...","transaction_key":"..."} (optionally "developer_id")';

export function parseTsysSecret(raw: string): ConnectorCredential {
  // parseJsonObject never quotes its input, which here is the secret.
  const object = parseJsonObject(raw);
  if (!object) throw new Error(SECRET_SHAPE);
  const parts: Record<string, string> = {};
  for (const [name, required] of [["device_id", true], ["transaction_key", true], ["developer_id", false]] as const) {
    const value = object[name];
    if (value === undefined && !required) continue;
    if (typeof value !== "string" || !/^\S+$/.test(value)) throw new Error(`${SECRET_SHAPE}: ${name} must be a non-empty string without spaces`);
    parts[name] = value;
  }
  return parts;
}

export function tsysCredential(credential: ConnectorCredential): TsysCredential | undefined {
  const { device_id: deviceId, transaction_key: transactionKey, developer_id: developerId } = credential;
  if (!deviceId || !transactionKey) return undefined;
  return developerId ? { deviceId, transactionKey, developerId } : { deviceId, transactionKey };
}

/** TransIT's card-not-present e-commerce profile, as the Global Payments SDK sends it for online sales. */
const ECOMMERCE_ACCEPTOR: Readonly<Record<string, string>> = {
  cardDataSource: "INTERNET",
  terminalCapability: "KEYED_ENTRY_ONLY",
  terminalOperatingEnvironment: "OFF_MERCHANT_PREMISES_UNATTENDED",
  cardholderAuthenticationMethod: "NOT_AUTHENTICATED",
  cardholderPresentDetail: "CARDHOLDER_NOT_PRESENT_ELECTRONIC_COMMERCE",
  cardPresentDetail: "CARD_NOT_PRESENT",
  cardDataInputMode: "ELECTRONIC_COMMERCE_NO_SECURITY_CHANNEL_ENCRYPTED_SET_WITHOUT_CARDHOLDER_CERTIFICATE",
};

/** MMYY, the short expiry the Global Payments SDK sends to TransIT. */
export function expirationDate(card: CardData): string {
  return String(card.expMonth).padStart(2, "0") + String(card.expYear % 100).padStart(2, "0");
}

function authentication(credential: TsysCredential): Record<string, string> {
  return { deviceID: credential.deviceId, transactionKey: credential.transactionKey };
}

function developer(credential: TsysCredential): Record<string, string> {
  return credential.developerId ? { developerID: credential.developerId } : {};
}

/**
 * Auth or Sale. TransIT has no idempotency key; `orderNumber` carries our reference and
 * `externalReferenceID` our payment id so an operator can find the transaction in TransIT.
 */
export function chargeRequest(req: ChargeRequest, credential: TsysCredential): TsysRequest {
  const body = {
    ...authentication(credential),
    transactionAmount: toDecimalString(req.amount, req.currency),
    currencyCode: req.currency.toUpperCase(),
    cardNumber: req.card.number,
    expirationDate: expirationDate(req.card),
    orderNumber: req.reference,
    externalReferenceID: req.paymentId,
    ...ECOMMERCE_ACCEPTOR,
    ...developer(credential),
  };
  return req.capture ? { Sale: body } : { Auth: body };
}

export function followOnRequest(kind: "Capture" | "Return", req: FollowOnRequest, credential: TsysCredential): TsysRequest {
  return {
    [kind]: {
      ...authentication(credential),
      transactionAmount: toDecimalString(req.amount, req.currency),
      transactionID: req.transactionId,
      ...developer(credential),
    },
  };
}

export function voidRequest(req: FollowOnRequest, credential: TsysCredential): TsysRequest {
  return { Void: { ...authentication(credential), transactionID: req.transactionId, ...developer(credential) } };
}

/** TSYS (Vital) issuer codes in `hostResponseCode` to paygate's connector_code. */
const HOST_DECLINE_CODES: ReadonlyMap<string, string> = new Map([
  ["05", "do_not_honor"],
  ["14", "invalid_card"],
  ["15", "invalid_card"],
  ["41", "lost_card"],
  ["43", "stolen_card"],
  ["51", "insufficient_funds"],
  ["54", "expired_card"],
  ["57", "card_not_supported"],
  ["82", "incorrect_cvc"],
  ["N7", "incorrect_cvc"],
  ["96", "processing_error"],
]);

export function tsysDeclineCode(hostResponseCode: string | undefined): string {
  return (hostResponseCode && HOST_DECLINE_CODES.get(hostResponseCode)) ?? "generic_decline";
}

export function readAnswer(kind: TsysTransaction, status: number, body: string): ConnectorResult {
  if (status >= 300) return processorError(`TSYS answered HTTP ${status}`);
  const json = parseJsonObject(body);
  if (!json) return processorError("TSYS answered with a body that is not JSON");
  const answer = asObject(json[`${kind}Response`]);
  if (!answer) return processorError(`TSYS answered without a ${kind}Response`);
  const message = scrubMessage(stringField(answer, "responseMessage") ?? "");
  switch (stringField(answer, "status")) {
    case "PASS": {
      const transactionId = stringField(answer, "transactionID");
      return transactionId ? { outcome: "approved", transactionId } : processorError(`TSYS passed the ${kind} without a transactionID`);
    }
    case "FAIL": {
      const host = stringField(answer, "hostResponseCode");
      // No issuer code means TransIT itself refused the request (credentials, unknown transaction...).
      const code = host ? tsysDeclineCode(host) : "processing_error";
      const responseCode = stringField(answer, "responseCode") ?? "?";
      return { outcome: "declined", code, message: `${responseCode}: ${message || "declined"}` };
    }
    default:
      return processorError(`TSYS answered a ${kind}Response without status PASS or FAIL`);
  }
}
