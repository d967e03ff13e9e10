/**
 * The one place connectors touch the network, so every processor turns timeouts, dropped
 * connections and 5xx answers into the same `ConnectorResult`s.
 *
 * A connector creates one `deadline` per connector call and passes it to every request that
 * call makes: a call that needs two requests (NMI's look-up, then the sale) still finishes
 * within the account's timeout instead of getting the timeout twice.
 */
import type { ConnectorResult } from "./connector";

/** Every processor call paygate makes is a POST. */
export interface HttpRequest {
  url: string;
  headers: Readonly<Record<string, string>>;
  body: string;
}

/** A processor answered below HTTP 500; anything else is already a `ConnectorResult`. */
export type HttpOutcome = { ok: true; status: number; body: string } | { ok: false; result: ConnectorResult };

export const TIMEOUT: ConnectorResult = { outcome: "timeout" };

export function deadline(timeoutMs: number): AbortSignal {
  return AbortSignal.timeout(timeoutMs);
}

export function processorError(message: string): ConnectorResult {
  return { outcome: "error", code: "processor_error", message };
}

/** Name/value pairs in order, for the processors that take form-encoded bodies. */
export type FormParams = ReadonlyArray<readonly [string, string]>;

export function formBody(params: FormParams): string {
  const form = new URLSearchParams();
  for (const [name, value] of params) form.append(name, value);
  return form.toString();
}

/** Joins a configured base URL (with or without a trailing slash) and an absolute API path. */
export function joinUrl(baseUrl: string, path: string): string {
  return baseUrl.replace(/\/+$/, "") + path;
}

/** Failures that happen before a byte of the request leaves: name resolution, connecting, the TLS certificate. */
const UNSENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "UND_ERR_CONNECT_TIMEOUT"]);

/**
 * Whether a failed fetch certainly never reached the processor. Anything else (a reset
 * or a closed socket after the request went out) may have been processed, so it is in
 * doubt like a timeout: re-sending it blindly could move money twice.
 */
function certainlyUnsent(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  const code = typeof cause?.code === "string" ? cause.code : undefined;
  if (code === undefined) return true;
  return UNSENT_CODES.has(code) || code.includes("CERT") || code.startsWith("ERR_TLS") || code.startsWith("ERR_SSL");
}

/**
 * Sends one request. The messages it builds name the processor and the HTTP status only:
 * fetch's own error text can carry the URL, and nothing here may echo request bodies.
 */
export async function httpCall(processor: string, request: HttpRequest, signal: AbortSignal): Promise<HttpOutcome> {
  let status: number;
  let body: string;
  try {
    // A redirect would replay credentials and card data to a host nobody configured.
    const response = await fetch(request.url, { method: "POST", headers: request.headers, body: request.body, signal, redirect: "error" });
    status = response.status;
    body = await response.text();
  } catch (error) {
    if (signal.aborted || !certainlyUnsent(error)) return { ok: false, result: TIMEOUT };
    return { ok: false, result: processorError(`could not reach ${processor}`) };
  }
  if (status >= 500) return { ok: false, result: processorError(`${processor} answered HTTP ${status}`) };
  return { ok: true, status, body };
}

/** The body as a JSON object, or undefined when it is not one (truncated, HTML, an array...). */
export function parseJsonObject(body: string): Record<string, unknown> | undefined {
  try {
    return asObject(JSON.parse(body));
  } catch {
    return undefined;
  }
}

export function asObject(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

export function stringField(object: Record<string, unknown>, key: string): string | undefined {
  const value = object[key];
  return typeof value === "string" ? value : undefined;
}

/**
 * Processor text is passed on in decline messages; issuers and gateways sometimes echo what
 * they received, so anything shaped like a card number is masked and the length is capped.
 */
export function scrubMessage(text: string): string {
  return text.replace(/\d(?:[ -]?\d){11,18}/g, "[redacted]").slice(0, 200);
}
