import { createHmac } from "node:crypto";
import { VERSION } from "../app-context";

/**
 * `X-Service-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`,
 * one `v1=` per secret (two while a rotated-out secret is still in its grace period).
 * Signing the timestamp with the body lets receivers refuse replays of old requests.
 */
function signatureHeader(secrets: readonly string[], body: string, unixSeconds: number): string {
  const signed = `${unixSeconds}.${body}`;
  const entries = secrets.map((secret) => `v1=${createHmac("sha256", secret).update(signed).digest("hex")}`);
  return [`t=${unixSeconds}`, ...entries].join(",");
}

/** Every header of a webhook POST; `secrets` as from `signingSecrets`. */
export function webhookHeaders(secrets: readonly string[], body: string, eventId: string, now: Date): Record<string, string> {
  return {
    "content-type": "application/json",
    "user-agent": `paygate-webhooks/${VERSION}`,
    "x-service-event-id": eventId,
    "x-service-signature": signatureHeader(secrets, body, Math.floor(now.getTime() / 1000)),
  };
}
