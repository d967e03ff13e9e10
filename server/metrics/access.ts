import { createHash, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";
import { ApiError } from "../errors";

/** Whether a peer address is this machine: 127.0.0.0/8, ::1, or 127.x mapped into IPv6. */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const v4 = address.startsWith("::ffff:") ? address.slice(7) : address;
  if (isIP(v4) === 4) return v4.startsWith("127.");
  return address === "::1";
}

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Who may read /metrics. Without PAYGATE_METRICS_TOKEN: clients on this machine only.
 * With it: whoever sends it as a bearer token, from anywhere, loopback included (a
 * reverse proxy on the same host makes every client look local). API keys never count.
 * Returns the refusal, or undefined when the scrape may proceed.
 */
export function metricsRefusal(remoteAddress: string | undefined, authorization: string | null, token: string | undefined): ApiError | undefined {
  if (token === undefined) {
    if (isLoopbackAddress(remoteAddress)) return undefined;
    return new ApiError(403, "metrics_forbidden", "Metrics are served to loopback clients only; set PAYGATE_METRICS_TOKEN to scrape from elsewhere.");
  }
  const sent = /^Bearer (.+)$/i.exec(authorization ?? "")?.[1];
  // Compared as digests: constant time, whatever the lengths.
  if (sent !== undefined && timingSafeEqual(digest(sent), digest(token))) return undefined;
  return new ApiError(401, "authentication_required", "Send the metrics token as `Authorization: Bearer <PAYGATE_METRICS_TOKEN>`.");
}
