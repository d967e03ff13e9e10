import { isIP } from "node:net";
import type { H3Event } from "h3";

export interface ClientAddress {
  /** The client's IP address; undefined only if the socket is already gone. */
  ip: string | undefined;
  scheme: "http" | "https";
}

/** The last comma-separated entry of a header: the one the proxy in front added. */
function lastEntry(value: string | null): string | undefined {
  if (value === null) return undefined;
  const entry = value.slice(value.lastIndexOf(",") + 1).trim();
  return entry === "" ? undefined : entry;
}

/**
 * Who is calling and over what. Without `trustProxy` the socket decides and the
 * forwarding headers are ignored: any client can send them. With it, paygate trusts
 * exactly one proxy, the peer on the socket: the client is the right-most
 * X-Forwarded-For entry (the one that proxy appended; entries left of it were sent by
 * the client and may be forged), and the scheme is the right-most X-Forwarded-Proto.
 * A missing or malformed value falls back to the socket's.
 */
export function clientAddress(event: H3Event, trustProxy: boolean, ownScheme: "http" | "https"): ClientAddress {
  const socketIp = (event.req as { ip?: string }).ip;
  if (!trustProxy) return { ip: socketIp, scheme: ownScheme };
  const forwardedIp = lastEntry(event.req.headers.get("x-forwarded-for"));
  const forwardedProto = lastEntry(event.req.headers.get("x-forwarded-proto"))?.toLowerCase();
  return {
    ip: forwardedIp !== undefined && isIP(forwardedIp) !== 0 ? forwardedIp : socketIp,
    scheme: forwardedProto === "https" || forwardedProto === "http" ? forwardedProto : ownScheme,
  };
}
