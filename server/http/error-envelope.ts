import type { ApiError } from "../errors";

/** The spec's error envelope; the only place an `ApiError` becomes a body. */
export function errorBody(error: ApiError, requestId: string): { error: Record<string, unknown> } {
  const { param, connector_code, available_accounts, payment_id } = error.details;
  return {
    error: {
      type: error.type,
      code: error.code,
      message: error.message,
      ...(param !== undefined && { param }),
      ...(connector_code !== undefined && { connector_code }),
      ...(payment_id !== undefined && { payment_id }),
      ...(available_accounts !== undefined && { available_accounts }),
      request_id: requestId,
    },
  };
}
