import { BlockList, isIP } from "node:net";
import type { Mode } from "../connectors/connector";
import { errors } from "../errors";

/**
 * Where webhooks may go. A webhook URL is chosen by a merchant but fetched from inside
 * the operator's network, so live endpoints may only reach public addresses (no SSRF
 * into the gateway's own network). Test mode also allows loopback, so a developer can
 * point the sandbox at a receiver on their own machine.
 */

const MAX_URL_LENGTH = 2048;

type AddressKind = "loopback" | "private" | "link-local" | "unspecified" | "CGNAT" | "multicast" | "reserved";

const RANGES: ReadonlyArray<readonly [AddressKind, string, number, "ipv4" | "ipv6"]> = [
  ["loopback", "127.0.0.0", 8, "ipv4"],
  ["loopback", "::1", 128, "ipv6"],
  ["private", "10.0.0.0", 8, "ipv4"],
  ["private", "172.16.0.0", 12, "ipv4"],
  ["private", "192.168.0.0", 16, "ipv4"],
  ["private", "fc00::", 7, "ipv6"],
  ["link-local", "169.254.0.0", 16, "ipv4"],
  ["link-local", "fe80::", 10, "ipv6"],
  ["unspecified", "0.0.0.0", 8, "ipv4"],
  ["unspecified", "::", 128, "ipv6"],
  ["CGNAT", "100.64.0.0", 10, "ipv4"],
  ["multicast", "224.0.0.0", 4, "ipv4"],
  ["multicast", "ff00::", 8, "ipv6"],
  ["reserved", "240.0.0.0", 4, "ipv4"],
];

// One BlockList per kind; BlockList also matches IPv4-mapped IPv6 (::ffff:10.0.0.1) against IPv4 ranges.
const LISTS = new Map<AddressKind, BlockList>();
for (const [kind, network, prefix, family] of RANGES) {
  const list = LISTS.get(kind) ?? new BlockList();
  list.addSubnet(network, prefix, family);
  LISTS.set(kind, list);
}

function kindOf(address: string): AddressKind | undefined {
  const family = isIP(address) === 6 ? "ipv6" : "ipv4";
  for (const [kind, list] of LISTS) if (list.check(address, family)) return kind;
  return undefined;
}

/**
 * Why `address` (an IP) may not receive this mode's webhooks, or undefined when it may:
 * a fragment such as "a loopback address (live-mode webhooks may only go to public addresses)".
 */
export function addressRefusal(address: string, mode: Mode): string | undefined {
  const kind = kindOf(address);
  if (kind === undefined || (kind === "loopback" && mode === "test")) return undefined;
  const allowed = mode === "test" ? "public or loopback addresses" : "public addresses";
  return `${kind === "unspecified" ? "an" : "a"} ${kind} address (${mode}-mode webhooks may only go to ${allowed})`;
}

const isLocalhostName = (host: string) => host === "localhost" || host.endsWith(".localhost");

/** The URL's host without IPv6 brackets or the root's trailing dot (`localhost.` is `localhost`). */
const bareHost = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");

/** Why the host as written in the URL is refused, before any DNS look-up. */
export function hostRefusal(url: URL, mode: Mode): string | undefined {
  const host = bareHost(url);
  if (isIP(host)) {
    const refusal = addressRefusal(host, mode);
    return refusal && `${host} is ${refusal}`;
  }
  if (mode === "live" && isLocalhostName(host)) return `${host} is a loopback name (live-mode webhooks may only go to public addresses)`;
  return undefined;
}

/**
 * Checks a URL given for an endpoint and returns it normalized (the form that is
 * stored and fetched), or throws the 400 naming `url`. Host names are resolved only at
 * delivery time, where each resolved address is checked again.
 */
export function checkEndpointUrl(raw: string, mode: Mode): string {
  const invalid = (reason: string) => errors.invalid("url", `Invalid webhook URL: ${reason}.`);
  if (raw.length > MAX_URL_LENGTH) throw invalid(`it is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid("it is not an absolute URL such as https://example.com/webhooks");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw invalid(`the scheme must be https://, not ${url.protocol}//`);
  if (mode === "live" && url.protocol !== "https:") throw invalid("live-mode endpoints must use https://");
  if (url.username !== "" || url.password !== "") throw invalid("it must not contain credentials (user:password@); authenticate webhooks with the signature");
  const refusal = hostRefusal(url, mode);
  if (refusal) throw invalid(refusal);
  return url.href;
}
