import { z } from "zod";
import type { ApiError } from "../errors";

/** The spec's error envelope, as the API reference documents it. */
export const errorEnvelopeSchema = z.object({
  error: z.object({
    type: z.enum(["invalid_request_error", "authentication_error", "connector_error", "timeout_error", "rate_limit_error", "api_error"]) satisfies z.ZodType<ApiError["type"]>,
    code: z.string(),
    message: z.string(),
    param: z.string().optional().meta({ description: "The request parameter at fault, as `card[number]`." }),
    connector_code: z.string().optional().meta({ description: "The processor's decline or error code." }),
    payment_id: z.string().optional().meta({ description: "The payment a declined authorization or sale recorded." }),
    available_accounts: z
      .array(z.object({ short_id: z.string(), connector_id: z.string(), mode: z.string(), key_kind: z.string(), label: z.string(), is_default: z.boolean() }))
      .optional()
      .meta({ description: "The accounts to choose from when the connector account is ambiguous or required." }),
    request_id: z.string(),
  }),
}).meta({ id: "Error" });

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
