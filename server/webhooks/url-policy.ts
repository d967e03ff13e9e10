import { BlockList, isIP } from "node:net";
import { networkInterfaces } from "node:os";
import type { Mode } from "../connectors/connector";
import { errors } from "../errors";

/**
 * Where webhooks may go. A webhook URL is chosen by a merchant but fetched from inside
 * the operator's network, so live endpoints may only reach public addresses (no SSRF
 * into the gateway's own network). Test mode also allows loopback, so a developer can
 * point the sandbox at a receiver on their own machine, but never at paygate itself;
 * not on a production server, whose loopback is the operator's, never a merchant's.
 */

const MAX_URL_LENGTH = 2048;

type AddressKind =
  | "loopback"
  | "private"
  | "link-local"
  | "site-local"
  | "unspecified"
  | "CGNAT"
  | "multicast"
  | "documentation"
  | "benchmarking"
  | "special-purpose"
  | "reserved";

/**
 * The IANA IPv4 and IPv6 special-purpose address registries, whole, plus multicast and
 * the deprecated site-local range. The ranges that embed an IPv4 address (mapped,
 * compatible, translated, NAT64, 6to4, Teredo) are not here: `embeddedIpv4` decodes
 * them and the embedded address is judged instead.
 */
const RANGES: ReadonlyArray<readonly [AddressKind, string, number, "ipv4" | "ipv6"]> = [
  ["unspecified", "0.0.0.0", 8, "ipv4"],
  ["private", "10.0.0.0", 8, "ipv4"],
  ["CGNAT", "100.64.0.0", 10, "ipv4"],
  ["loopback", "127.0.0.0", 8, "ipv4"],
  ["link-local", "169.254.0.0", 16, "ipv4"],
  ["private", "172.16.0.0", 12, "ipv4"],
  ["special-purpose", "192.0.0.0", 24, "ipv4"],
  ["documentation", "192.0.2.0", 24, "ipv4"],
  ["special-purpose", "192.31.196.0", 24, "ipv4"],
  ["special-purpose", "192.52.193.0", 24, "ipv4"],
  ["special-purpose", "192.88.99.0", 24, "ipv4"],
  ["private", "192.168.0.0", 16, "ipv4"],
  ["special-purpose", "192.175.48.0", 24, "ipv4"],
  ["benchmarking", "198.18.0.0", 15, "ipv4"],
  ["documentation", "198.51.100.0", 24, "ipv4"],
  ["documentation", "203.0.113.0", 24, "ipv4"],
  ["multicast", "224.0.0.0", 4, "ipv4"],
  ["reserved", "240.0.0.0", 4, "ipv4"],
  ["loopback", "::1", 128, "ipv6"],
  ["unspecified", "::", 128, "ipv6"],
  ["special-purpose", "100::", 64, "ipv6"],
  ["special-purpose", "100:0:0:1::", 64, "ipv6"],
  ["special-purpose", "2001::", 23, "ipv6"],
  ["documentation", "2001:db8::", 32, "ipv6"],
  ["special-purpose", "2620:4f:8000::", 48, "ipv6"],
  ["documentation", "3fff::", 20, "ipv6"],
  ["special-purpose", "5f00::", 16, "ipv6"],
  ["private", "fc00::", 7, "ipv6"],
  ["link-local", "fe80::", 10, "ipv6"],
  ["site-local", "fec0::", 10, "ipv6"],
  ["multicast", "ff00::", 8, "ipv6"],
];

const LISTS = new Map<AddressKind, BlockList>();
for (const [kind, network, prefix, family] of RANGES) {
  const list = LISTS.get(kind) ?? new BlockList();
  list.addSubnet(network, prefix, family);
  LISTS.set(kind, list);
}
/** Global unicast: IPv6 outside it is unassigned or special. */
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet("2000::", 3, "ipv6");

/** The 16 bytes of an IPv6 address (as `isIP` accepts it, a trailing dotted quad included). */
function ipv6Bytes(address: string): Buffer {
  let text = address.split("%")[0] as string;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? (text.split("::") as [string, string]) : [text, undefined];
  const groups = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  const bytes = Buffer.alloc(16);
  all.forEach((group, i) => bytes.writeUInt16BE(group, i * 2));
  return bytes;
}

const ipv4At = (bytes: Buffer, at: number): string => [...bytes.subarray(at, at + 4)].join(".");
const zero = (bytes: Buffer, from: number, to: number) => bytes.subarray(from, to).every((b) => b === 0);

/** The IPv4 address an IPv6 address stands for, and the form it was written in; undefined when none. */
export function embeddedIpv4(address: string): { ipv4: string; form: string } | undefined {
  const b = ipv6Bytes(address);
  const word = (at: number) => b.readUInt16BE(at);
  if (zero(b, 0, 10) && word(10) === 0xffff) return { ipv4: ipv4At(b, 12), form: "an IPv4-mapped address" };
  if (zero(b, 0, 8) && word(8) === 0xffff && word(10) === 0) return { ipv4: ipv4At(b, 12), form: "an IPv4-translated address" };
  if (word(0) === 0x64 && word(2) === 0xff9b && zero(b, 4, 12)) return { ipv4: ipv4At(b, 12), form: "a NAT64 address" };
  if (word(0) === 0x64 && word(2) === 0xff9b && word(4) === 1) {
    // RFC 6052 /48 layout: bits 64-71 are the reserved "u" octet, skipped.
    return { ipv4: [b[6], b[7], b[9], b[10]].join("."), form: "a local-use NAT64 address" };
  }
  if (word(0) === 0x2002) return { ipv4: ipv4At(b, 2), form: "a 6to4 address" };
  if (word(0) === 0x2001 && word(2) === 0) {
    const client = b.subarray(12, 16).map((x) => x ^ 0xff);
    return { ipv4: [...client].join("."), form: "a Teredo address" };
  }
  // IPv4-compatible (::a.b.c.d); :: and ::1 are the unspecified and loopback addresses.
  if (zero(b, 0, 12) && !zero(b, 12, 15)) return { ipv4: ipv4At(b, 12), form: "an IPv4-compatible address" };
  return undefined;
}

function kindOf(address: string): { kind: AddressKind; via?: string } | undefined {
  if (isIP(address) === 6) {
    const embedded = embeddedIpv4(address);
    if (embedded) {
      const inner = kindOf(embedded.ipv4);
      return inner && { kind: inner.kind, via: `${embedded.form} for ${embedded.ipv4}` };
    }
    for (const [kind, list] of LISTS) if (list.check(address, "ipv6")) return { kind };
    return GLOBAL_UNICAST.check(address, "ipv6") ? undefined : { kind: "reserved" };
  }
  for (const [kind, list] of LISTS) if (list.check(address, "ipv4")) return { kind };
  return undefined;
}

const article = (word: string) => (/^[aeiou]/i.test(word) ? "an" : "a");

/**
 * Why `address` (an IP) may not receive this mode's webhooks, or undefined when it may:
 * a fragment such as "a loopback address (live-mode webhooks may only go to public addresses)".
 */
export function addressRefusal(address: string, mode: Mode, refuseLoopback = false): string | undefined {
  const found = kindOf(address);
  if (found === undefined || (found.kind === "loopback" && loopbackAllowed(mode, refuseLoopback))) return undefined;
  return `${article(found.kind)} ${found.kind} address${found.via ? `, as ${found.via}` : ""} (${reach(mode, refuseLoopback)})`;
}

/** Test mode may call a receiver on this machine, except on a production server. */
const loopbackAllowed = (mode: Mode, refuseLoopback: boolean): boolean => mode === "test" && !refuseLoopback;

const reach = (mode: Mode, refuseLoopback: boolean): string =>
  mode === "live" ? "live-mode webhooks may only go to public addresses"
  : refuseLoopback ? "test-mode webhooks of a production server may only go to public addresses"
  : "test-mode webhooks may only go to public or loopback addresses";

/** The server-wide limits on webhook targets, beyond each mode's own. */
export interface TargetRules {
  /** Where paygate itself listens, never a target; unknown to the CLI, which does not listen. */
  self?: SelfAddress | undefined;
  /**
   * Loopback refused in test mode too. Set when production (server/production-rule.ts):
   * there loopback is the operator's machine, where services not meant for merchants listen.
   */
  refuseLoopback: boolean;
}

/** Where paygate itself listens: webhooks may never call it (they would read its API back). */
export interface SelfAddress {
  port: number;
  /** The listen host, and every local interface's address when it listens on all of them. */
  addresses: ReadonlySet<string>;
}

export function selfAddress(host: string, port: number): SelfAddress {
  const addresses = new Set([host]);
  if (host === "0.0.0.0" || host === "::") {
    for (const list of Object.values(networkInterfaces())) for (const entry of list ?? []) addresses.add(entry.address);
  }
  return { port, addresses };
}

/** Why a connection to `address`:`port` would reach paygate itself, or undefined. */
export function selfRefusal(address: string, port: number, self: SelfAddress | undefined): string | undefined {
  if (self === undefined || port !== self.port) return undefined;
  const kind = isIP(address) ? kindOf(address)?.kind : undefined;
  const local = kind === "loopback" || kind === "unspecified" || self.addresses.has(address) || isLocalhostName(address);
  return local ? `${address}:${port} is paygate's own address (webhooks may not call paygate itself)` : undefined;
}

const isLocalhostName = (host: string) => host === "localhost" || host.endsWith(".localhost");

/** A host without IPv6 brackets or the root's trailing dot (`localhost.` is `localhost`). */
const bareHost = (hostname: string): string => hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");

/** The port a URL connects to. */
export const portOf = (url: URL): number => Number(url.port || (url.protocol === "https:" ? 443 : 80));

/** Why the host as written in the URL is refused, before any DNS look-up. */
export function hostRefusal(url: URL, mode: Mode, rules?: TargetRules): string | undefined {
  return targetRefusal(url.hostname, portOf(url), mode, rules);
}

/** `hostRefusal` of a host and port as a connection is opened to them. */
export function targetRefusal(hostname: string, port: number, mode: Mode, rules?: TargetRules): string | undefined {
  const host = bareHost(hostname);
  const refuseLoopback = rules?.refuseLoopback ?? false;
  const itself = selfRefusal(host, port, rules?.self);
  if (itself) return itself;
  if (isIP(host)) {
    const refusal = addressRefusal(host, mode, refuseLoopback);
    return refusal && `${host} is ${refusal}`;
  }
  if (!loopbackAllowed(mode, refuseLoopback) && isLocalhostName(host)) return `${host} is a loopback name (${reach(mode, refuseLoopback)})`;
  return undefined;
}

/**
 * Checks a URL given for an endpoint and returns it normalized (the form that is
 * stored and fetched), or throws the 400 naming `url`. Host names are resolved only at
 * delivery time, where each resolved address is checked again.
 */
export function checkEndpointUrl(raw: string, mode: Mode, rules?: TargetRules): string {
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
  const refusal = hostRefusal(url, mode, rules);
  if (refusal) throw invalid(refusal);
  return url.href;
}
