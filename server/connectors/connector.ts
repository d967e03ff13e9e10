/**
 * The one interface every processor sits behind. The payment services only ever talk
 * to a `Connector`; the mapping to a processor's wire format lives in that
 * processor's own folder (`<id>/index.ts` for the calls, `<id>/wire.ts` for the JSON).
 */

export type ConnectorId = "mock" | "stripe" | "tsys" | "nmi";
export type Mode = "test" | "live";

/** A card, decrypted only for the duration of one connector call. Never logged. */
export interface CardData {
  number: string;
  expMonth: number;
  expYear: number;
}

/** Where and how a connector call goes; built per call from config and the account. */
export interface CallContext {
  /** The parsed secret behind the account's `credential_ref`, read at call time. */
  credential: ConnectorCredential;
  /** Processor base URL (`PAYGATE_<PROCESSOR>_BASE_URL` or the documented host). */
  baseUrl: string;
  /** Per-call timeout; past it the call answers `{ outcome: "timeout" }`. */
  timeoutMs: number;
  /** Where a processor without idempotency keys remembers what it sent without an answer. */
  inDoubt: InDoubtReferences;
}

/**
 * Processor references sent without a known outcome. Kept in the database: they must
 * outlive the process and hold for every process sharing it.
 */
export interface InDoubtReferences {
  /** Records that `reference` is about to be sent; false while an earlier send of it is unanswered (for up to `holdMs`). */
  begin(reference: string, holdMs: number): Promise<boolean>;
  /** The processor answered `reference`: sending it again is safe. */
  answered(reference: string): Promise<void>;
}

export interface ChargeRequest {
  /** Integer amount in the currency's minor unit (see `server/payments/currency.ts`). */
  amount: number;
  /** Lowercase ISO 4217 code. */
  currency: string;
  card: CardData;
  /** `false`: authorize only (manual capture); `true`: sale. */
  capture: boolean;
  /**
   * Processor-side idempotency key, derived from the API key and the request's
   * Idempotency-Key: the same client retry always sends the same reference, so a
   * processor (or a look-up by reference) can refuse to charge twice.
   */
  reference: string;
  /** Our payment id, for processors that keep an order/merchant reference. */
  paymentId: string;
  description?: string;
}

export interface FollowOnRequest {
  /** The processor's id of the originating transaction (`connector_transaction_id`). */
  transactionId: string;
  amount: number;
  currency: string;
  reference: string;
  paymentId: string;
}

export type ConnectorResult =
  | { outcome: "approved"; transactionId: string }
  | { outcome: "declined"; code: string; message: string }
  | { outcome: "timeout" }
  /** 5xx, malformed or unexpected answers; `code` is `processor_error`. */
  | { outcome: "error"; code: string; message: string };

/** The secret behind `credential_ref`, parsed into its parts. */
export type ConnectorCredential = Readonly<Record<string, string>>;

export interface Connector {
  readonly id: ConnectorId;
  /** `key_kind` values this connector's accounts may use. */
  readonly keyKinds: readonly string[];
  /** Whether live-mode accounts may exist (the mock is test-only). */
  readonly liveCapable: boolean;
  /** The documented production host, used when no base URL is configured. */
  readonly defaultBaseUrl: string;
  /**
   * Checks a secret's shape (a JSON object with named parts, or one plain string)
   * and returns its parts; throws `Error` with a message that never contains the value.
   */
  parseCredential(raw: string): ConnectorCredential;
  authorize(req: ChargeRequest, ctx: CallContext): Promise<ConnectorResult>;
  capture(req: FollowOnRequest, ctx: CallContext): Promise<ConnectorResult>;
  refund(req: FollowOnRequest, ctx: CallContext): Promise<ConnectorResult>;
  void(req: FollowOnRequest, ctx: CallContext): Promise<ConnectorResult>;
}
