/**
 * The one error class of paygate. Services throw it; the HTTP layer renders it as the
 * spec's envelope (server/http/error-envelope.ts) and the CLI prints its message.
 */

export type ErrorType =
  | "invalid_request_error"
  | "authentication_error"
  | "connector_error"
  | "timeout_error"
  | "rate_limit_error"
  | "api_error";

/** One item of `available_accounts` (CONTRACT §6). */
export interface AvailableAccount {
  short_id: string;
  connector_id: string;
  mode: string;
  key_kind: string;
  label: string;
  is_default: boolean;
}

export interface ErrorDetails {
  param?: string;
  connector_code?: string;
  available_accounts?: AvailableAccount[];
  payment_id?: string;
  /** Extra response headers, e.g. `Retry-After`. */
  headers?: Record<string, string>;
}

function typeForStatus(status: number): ErrorType {
  if (status === 401 || status === 403) return "authentication_error";
  if (status === 429) return "rate_limit_error";
  if (status === 502) return "connector_error";
  if (status === 504) return "timeout_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

export class ApiError extends Error {
  readonly type: ErrorType;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.type = typeForStatus(status);
  }
}

/** Builders for the codes used all over; the rarer ones are built in place. */
export const errors = {
  missing: (param: string) => new ApiError(400, "parameter_missing", `Missing required parameter: ${param}.`, { param }),
  invalid: (param: string, message: string) => new ApiError(400, "parameter_invalid", message, { param }),
  unknown: (param: string) => new ApiError(400, "parameter_unknown", `Received unknown parameter: ${param}.`, { param }),
  notFound: (code: string, message: string, param?: string) =>
    new ApiError(404, code, message, param === undefined ? {} : { param }),
  conflict: (message: string) => new ApiError(409, "conflict", message),
  /** Stored data the server cannot decrypt: the operator's master key, not the caller's request. */
  masterKeyMismatch: () =>
    new ApiError(503, "master_key_mismatch", "Stored data cannot be decrypted with this server's master key. The operator has been alerted; retry later."),
  /** The database cannot take the request now (unreachable, locked, restarting); a retry with the same Idempotency-Key is safe. */
  serviceUnavailable: () => new ApiError(503, "service_unavailable", "The service is temporarily unavailable. Retry later with the same Idempotency-Key."),
  internal: () => new ApiError(500, "api_error", "An unexpected error occurred. It has been logged; retry later or contact the operator with the request id."),
};

/** Whether `value` is an ApiError, across module copies. */
export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}
