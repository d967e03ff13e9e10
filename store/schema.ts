import type { ColumnType, Insertable, Selectable, Updateable } from "kysely";

/**
 * Row shapes of every table, as kysely sees them. Timestamps are ISO 8601 UTC strings
 * with milliseconds (they sort as text); booleans are 0/1; JSON columns are text.
 */
export interface Database {
  settings: SettingsTable;
  merchants: MerchantsTable;
  api_keys: ApiKeysTable;
  idempotency_keys: IdempotencyKeysTable;
  secrets: SecretsTable;
  connector_accounts: ConnectorAccountsTable;
  routing: RoutingTable;
  card_tokens: CardTokensTable;
  payments: PaymentsTable;
  refunds: RefundsTable;
  events: EventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  in_doubt_references: InDoubtReferencesTable;
  audit_log: AuditLogTable;
  dashboard_sessions: DashboardSessionsTable;
  dashboard_sign_in_tokens: DashboardSignInTokensTable;
}

export interface SettingsTable {
  name: string;
  value: string;
}

export interface MerchantsTable {
  id: string;
  short_id: string;
  name: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  merchant_id: string;
  name: string;
  type: "secret" | "publishable";
  mode: "test" | "live";
  role: "merchant" | "admin";
  /** JSON array of scope strings. */
  scopes: string;
  /** SHA-256 (hex) of the plaintext key; the plaintext is never stored. */
  key_hash: string;
  key_prefix: string;
  last4: string;
  status: "active" | "revoked";
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface IdempotencyKeysTable {
  api_key_id: string;
  method: string;
  path: string;
  key: string;
  fingerprint: string;
  /**
   * `in_flight` while a request holds it, `done` with its answer, `open` when a failed
   * request (5xx) let it go: free for a retry with the same parameters only.
   */
  state: "in_flight" | "done" | "open";
  /**
   * Epoch ms; the request holding the lock bumps it every third of the lock timeout
   * (server/http/idempotency.ts), so only an in-flight row whose process stopped
   * refreshing it grows older than the lock timeout and is taken over.
   */
  locked_at: number;
  response_status: number | null;
  /** JSON object of the response headers to replay. */
  response_headers: string | null;
  response_body: string | null;
  created_at: number;
  expires_at: number;
}

export interface SecretsTable {
  path: string;
  version: number;
  /** AES-256-GCM with the master key: base64 of iv | tag | ciphertext. */
  ciphertext: string;
  created_at: string;
}

export interface ConnectorAccountsTable {
  id: string;
  short_id: string;
  merchant_id: string;
  connector_id: string;
  mode: "test" | "live";
  key_kind: string;
  label: string;
  is_default: number;
  credential_ref: string;
  is_active: number;
  created_at: string;
  updated_at: string;
}

export interface RoutingTable {
  merchant_id: string;
  mode: "test" | "live";
  /** JSON array of connector ids, highest priority first. */
  connectors: string;
  updated_at: string;
}

export interface CardTokensTable {
  token: string;
  merchant_id: string;
  mode: "test" | "live";
  /** AES-256-GCM with the master key; the CVC is never stored anywhere. */
  pan_encrypted: string;
  bin_prefix: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  card_brand: string;
  created_at: string;
}

export interface PaymentsTable {
  id: string;
  merchant_id: string;
  mode: "test" | "live";
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  currency: string;
  status: string;
  capture_method: "manual" | "automatic";
  connector_id: string;
  connector_account_id: string;
  gateway_token: string;
  card_brand: string;
  card_last4: string;
  card_exp_month: number;
  card_exp_year: number;
  connector_transaction_id: string | null;
  failure_code: string | null;
  failure_message: string | null;
  description: string | null;
  /** JSON object of string keys and values. */
  metadata: string;
  created_at: string;
  updated_at: string;
  /**
   * The follow-on (capture, refund, void) that holds this payment while it asks the
   * processor; null when none does. Taken by a conditional update before the call,
   * cleared by the commit that records the outcome (server/payments/follow-on.ts).
   */
  pending_operation: string | null;
  /** The amount the holder may move: refunds are checked against it at claim time. */
  pending_amount: number | null;
  /** The holder's processor reference: its retry (same Idempotency-Key) takes the claim back. */
  pending_request: string | null;
  /** Epoch ms; past it the claim is free, so a crashed process does not hold the payment forever. */
  pending_until: number | null;
  /** 1 when the processor did not answer: only the holder's retry may take the claim before `pending_until`. */
  pending_in_doubt: number;
}

export interface RefundsTable {
  id: string;
  payment_id: string;
  amount: number;
  reason: string | null;
  connector_refund_id: string | null;
  created_at: string;
}

export interface EventsTable {
  id: string;
  merchant_id: string;
  mode: "test" | "live";
  type: string;
  payment_id: string | null;
  /** The exact JSON body delivered to receivers. */
  payload: string;
  created_at: string;
}

export interface WebhookEndpointsTable {
  id: string;
  merchant_id: string;
  mode: "test" | "live";
  url: string;
  /** JSON array of event types, or ["*"]. */
  event_types: string;
  description: string | null;
  status: "enabled" | "disabled";
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: "pending" | "succeeded" | "dead";
  attempts: number;
  /** Epoch milliseconds; due rows are picked by the dispatcher and the cron sweep. */
  next_attempt_at: number | null;
  /** Epoch milliseconds; set while a process is sending, so two senders never overlap. */
  leased_until: number | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_excerpt: string | null;
}

/** Processor references sent without a known outcome; re-sending one could move money twice. */
export interface InDoubtReferencesTable {
  connector_id: string;
  reference: string;
  /** Epoch ms; past it the reference may be sent again (a retry this late is a new intent). */
  expires_at: number;
}

export type MerchantRow = Selectable<MerchantsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type IdempotencyKeyRow = Selectable<IdempotencyKeysTable>;
export type NewApiKeyRow = Insertable<ApiKeysTable>;
export type ApiKeyUpdate = Updateable<ApiKeysTable>;
export type ConnectorAccountRow = Selectable<ConnectorAccountsTable>;
export type CardTokenRow = Selectable<CardTokensTable>;
export type PaymentRow = Selectable<PaymentsTable>;
export type RefundRow = Selectable<RefundsTable>;
export type EventRow = Selectable<EventsTable>;
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;

/** One recorded change (server/audit): who, what, on which target; never a secret value. */
export interface AuditLogTable {
  id: string;
  created_at: string;
  /** `api_key`, `cli` or `session`. */
  actor_type: string;
  /** The API key id, the OS user, or the session id. */
  actor_id: string;
  action: string;
  target_type: string;
  target_id: string;
  merchant_id: string | null;
  /** `test` or `live` for what has a mode; null for a merchant, a secret, the whole DLQ. */
  mode: "test" | "live" | null;
  /** JSON object of non-secret facts (a secret's version, the changed fields), or null. */
  details: string | null;
}
export type AuditLogRow = Selectable<AuditLogTable>;

/** A dashboard session (server/dashboard): its key is re-checked on every request. */
export interface DashboardSessionsTable {
  /** HMAC of the cookie's token under a key derived from the master key. */
  id: string;
  api_key_id: string;
  csrf_token: string;
  /** Epoch milliseconds. */
  created_at: number;
  last_seen_at: number;
  /** The merchant an admin session chose in the switcher (its UUID); null for the key's own. */
  chosen_merchant_id: ColumnType<string | null, string | null | undefined, string | null>;
}
export type DashboardSessionRow = Selectable<DashboardSessionsTable>;

/** A one-time sign-in link's token (`paygate sandbox`), spent on first use. */
export interface DashboardSignInTokensTable {
  /** HMAC of the token, like a session's id. */
  id: string;
  api_key_id: string;
  /** Epoch milliseconds. */
  expires_at: number;
}
