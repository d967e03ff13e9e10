import { lookup as dnsLookup } from "node:dns";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { Mode } from "../connectors/connector";
import { addressRefusal, hostRefusal, portOf, selfRefusal, type SelfAddress } from "./url-policy";

/** One webhook POST, fully prepared (signed body and headers). */
export interface WebhookRequest {
  url: string;
  /** The endpoint's mode decides which addresses it may reach. */
  mode: Mode;
  /** paygate's own listening address, never a target. */
  self?: SelfAddress | undefined;
  body: string;
  headers: Record<string, string>;
}

/** What one attempt came to; `statusCode` is null when no answer arrived. */
export interface AttemptOutcome {
  delivered: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseExcerpt: string | null;
}

const EXCERPT_BYTES = 500;

class RefusedAddressError extends Error {}

/**
 * Resolves the host and refuses the connection when any address it resolves to is not
 * allowed. Checking inside the socket's own look-up means the checked address is the
 * one connected to: a DNS answer cannot change between the check and the connect.
 */
export function guardedLookup(mode: Mode, port?: number, self?: SelfAddress): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, "");
      for (const { address } of addresses) {
        const refusal = (port !== undefined && selfRefusal(address, port, self)) || addressRefusal(address, mode);
        if (refusal) return callback(new RefusedAddressError(`refused: ${hostname} resolves to ${address}, ${refusal}`), "");
      }
      const first = addresses[0];
      if (options.all) return callback(null, addresses);
      if (!first) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }), "");
      return callback(null, first.address, first.family);
    });
  };
}

/**
 * Sends one webhook. Never throws: every failure (refused target, timeout, connection
 * error) is an outcome. 2xx is delivered; anything else is a failed attempt. Redirects
 * are not followed (they count as non-2xx). `timeoutMs` bounds the whole exchange;
 * `cancel` cuts it short (shutdown).
 */
export function postWebhook(request: WebhookRequest, timeoutMs: number, cancel?: AbortSignal): Promise<AttemptOutcome> {
  const started = performance.now();
  const outcome = (statusCode: number | null, error: string | null, responseExcerpt: string | null): AttemptOutcome => ({
    delivered: statusCode !== null && statusCode >= 200 && statusCode < 300,
    statusCode,
    durationMs: Math.round(performance.now() - started),
    error,
    responseExcerpt,
  });
  const url = new URL(request.url);
  const refusal = hostRefusal(url, request.mode, request.self);
  if (refusal !== undefined) return Promise.resolve(outcome(null, `refused: ${refusal}`, null));
  if (request.mode === "live" && url.protocol !== "https:") return Promise.resolve(outcome(null, "refused: live-mode webhooks must use https://", null));

  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = cancel ? AbortSignal.any([timeout, cancel]) : timeout;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (result: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const transport = url.protocol === "https:" ? https : http;
    const req = transport.request(
      url,
      {
        method: "POST",
        headers: { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) },
        // A fresh connection per attempt: each one goes through the guarded look-up.
        agent: false,
        lookup: guardedLookup(request.mode, portOf(url), request.self),
        signal,
      },
      (res) => {
        // The status decides the attempt; the body is only read for the excerpt.
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          settle(outcome(res.statusCode ?? null, null, Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString("utf8")));
          res.destroy();
        };
        res.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= EXCERPT_BYTES) done();
        });
        res.on("end", done);
        res.on("close", done);
      },
    );
    req.on("error", (error) => {
      if (cancel?.aborted) return settle(outcome(null, "cancelled: paygate is shutting down", null));
      if (timeout.aborted) return settle(outcome(null, `timed out after ${timeoutMs} ms`, null));
      const message = error instanceof RefusedAddressError ? error.message : `connection failed: ${error.message}`;
      settle(outcome(null, message, null));
    });
    req.end(request.body);
  });
}
