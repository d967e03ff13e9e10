import { networkInterfaces } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardedLookup } from "../../server/webhooks/send";
import { addressRefusal, checkEndpointUrl, embeddedIpv4, selfAddress, selfRefusal } from "../../server/webhooks/url-policy";
import { bootServer, type TestServer } from "../support/harness";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";
import { emitEvent, firstAttempts } from "./support";

/** [address, what the refusal names]: refused in live mode, each a range of the IANA special-purpose registries. */
const LIVE_REFUSED: ReadonlyArray<readonly [string, RegExp]> = [
  // Seen accepted on the old policy (issue 12).
  ["64:ff9b::a9fe:a9fe", /link-local address, as a NAT64 address for 169\.254\.169\.254/],
  ["2002:a9fe:a9fe::1", /link-local address, as a 6to4 address for 169\.254\.169\.254/],
  ["::ffff:0:7f00:1", /loopback address, as an IPv4-translated address for 127\.0\.0\.1/],
  ["198.18.0.1", /benchmarking/],
  ["192.0.0.1", /special-purpose/],
  ["fec0::1", /site-local/],
  ["100::1", /special-purpose/],
  // IPv4 special-purpose registry.
  ["0.0.0.0", /unspecified/],
  ["0.255.255.255", /unspecified/],
  ["10.0.0.1", /private/],
  ["100.64.0.1", /CGNAT/],
  ["100.127.255.254", /CGNAT/],
  ["127.0.0.1", /loopback/],
  ["127.255.255.254", /loopback/],
  ["169.254.169.254", /link-local/],
  ["172.16.0.1", /private/],
  ["172.31.255.255", /private/],
  ["192.0.0.8", /special-purpose/],
  ["192.0.0.9", /special-purpose/],
  ["192.0.0.10", /special-purpose/],
  ["192.0.0.170", /special-purpose/],
  ["192.0.0.171", /special-purpose/],
  ["192.0.0.255", /special-purpose/],
  ["192.0.2.1", /documentation/],
  ["192.31.196.1", /special-purpose/],
  ["192.52.193.1", /special-purpose/],
  ["192.88.99.1", /special-purpose/],
  ["192.168.1.1", /private/],
  ["192.175.48.1", /special-purpose/],
  ["198.19.255.255", /benchmarking/],
  ["198.51.100.7", /documentation/],
  ["203.0.113.9", /documentation/],
  ["224.0.0.1", /multicast/],
  ["239.255.255.255", /multicast/],
  ["240.0.0.1", /reserved/],
  ["255.255.255.255", /reserved/],
  // IPv6 special-purpose registry.
  ["::1", /loopback/],
  ["::", /unspecified/],
  ["::ffff:10.0.0.1", /private address, as an IPv4-mapped address for 10\.0\.0\.1/],
  ["::ffff:7f00:1", /loopback address, as an IPv4-mapped address for 127\.0\.0\.1/],
  ["::ffff:0:a00:1", /private address, as an IPv4-translated address/],
  ["::10.0.0.1", /private address, as an IPv4-compatible address for 10\.0\.0\.1/],
  ["::127.0.0.1", /loopback address, as an IPv4-compatible address/],
  ["64:ff9b::10.0.0.1", /private address, as a NAT64 address/],
  ["64:ff9b::7f00:1", /loopback address, as a NAT64 address for 127\.0\.0\.1/],
  ["64:ff9b:1:a9fe:a9:fe00::", /link-local address, as a local-use NAT64 address for 169\.254\.169\.254/],
  ["64:ff9b:1:c0a8:1:100::", /private address, as a local-use NAT64 address for 192\.168\.1\.1/],
  ["100::ffff", /special-purpose/],
  ["100:0:0:1::1", /special-purpose/],
  ["2001:1::1", /special-purpose/],
  ["2001:1::2", /special-purpose/],
  ["2001:2::1", /special-purpose/],
  ["2001:3::1", /special-purpose/],
  ["2001:4:112::1", /special-purpose/],
  ["2001:10::1", /special-purpose/],
  ["2001:20::1", /special-purpose/],
  ["2001:30::1", /special-purpose/],
  ["2001:1ff:ffff::1", /special-purpose/],
  ["2001:0:4136:e378:8000:63bf:80ff:fffe", /loopback address, as a Teredo address for 127\.0\.0\.1/],
  ["2001:0:4136:e378:8000:63bf:f5ff:fffe", /private address, as a Teredo address for 10\.0\.0\.1/],
  ["2001:db8::1", /documentation/],
  ["2002:7f00:1::1", /loopback address, as a 6to4 address for 127\.0\.0\.1/],
  ["2002:c0a8:101::1", /private address, as a 6to4 address for 192\.168\.1\.1/],
  ["2620:4f:8000::1", /special-purpose/],
  ["3fff::1", /documentation/],
  ["3fff:fff::1", /documentation/],
  ["5f00::1", /special-purpose/],
  ["fc00::1", /private/],
  ["fdff:ffff::1", /private/],
  ["fe80::1", /link-local/],
  ["febf::1", /link-local/],
  ["fec0::1", /site-local/],
  ["feff::1", /site-local/],
  ["ff02::1", /multicast/],
  ["4000::1", /reserved/],
  ["1::1", /reserved/],
];

/** Public: allowed in both modes, embedded public IPv4 included. */
const PUBLIC = [
  "8.8.8.8",
  "1.1.1.1",
  "11.0.0.1",
  "100.128.0.1",
  "172.32.0.1",
  "192.0.3.1",
  "192.169.0.1",
  "198.20.0.1",
  "223.255.255.254",
  "2606:4700::1111",
  "2001:200::1",
  "2a00:1450:4001::200e",
  "::ffff:8.8.8.8",
  "64:ff9b::808:808",
  "2002:808:808::1",
  "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
];

describe("webhook targets: the IANA special-purpose registries", () => {
  it.each(LIVE_REFUSED)("refuses %s in live mode, naming why", (address, why) => {
    expect(addressRefusal(address, "live")).toMatch(why);
    expect(addressRefusal(address, "live")).toMatch(/\(live-mode webhooks may only go to public addresses\)$/);
    const literal = address.includes(":") ? `[${address}]` : address;
    expect(() => checkEndpointUrl(`https://${literal}/hooks`, "live")).toThrow(/Invalid webhook URL: .* is an? /);
  });

  it.each(PUBLIC)("allows the public address %s in both modes", (address) => {
    expect(addressRefusal(address, "live")).toBeUndefined();
    expect(addressRefusal(address, "test")).toBeUndefined();
  });

  it("test mode allows loopback only, embedded loopback included", () => {
    for (const address of ["127.0.0.1", "::1", "::ffff:127.0.0.1", "2002:7f00:1::1"]) expect(addressRefusal(address, "test"), address).toBeUndefined();
    for (const address of ["10.0.0.1", "64:ff9b::a9fe:a9fe", "198.18.0.1", "fec0::1", "100::1", "::ffff:192.168.0.1"]) expect(addressRefusal(address, "test"), address).toBeDefined();
  });

  it("decodes every embedding of an IPv4 address", () => {
    expect(embeddedIpv4("::ffff:1.2.3.4")).toEqual({ ipv4: "1.2.3.4", form: "an IPv4-mapped address" });
    expect(embeddedIpv4("::1.2.3.4")).toEqual({ ipv4: "1.2.3.4", form: "an IPv4-compatible address" });
    expect(embeddedIpv4("::ffff:0:102:304")).toEqual({ ipv4: "1.2.3.4", form: "an IPv4-translated address" });
    expect(embeddedIpv4("64:ff9b::102:304")).toEqual({ ipv4: "1.2.3.4", form: "a NAT64 address" });
    expect(embeddedIpv4("64:ff9b:1:102:3:400::")).toEqual({ ipv4: "1.2.3.4", form: "a local-use NAT64 address" });
    expect(embeddedIpv4("2002:102:304:5::6")).toEqual({ ipv4: "1.2.3.4", form: "a 6to4 address" });
    expect(embeddedIpv4("2001:0:4136:e378:8000:63bf:fefd:fcfb")).toEqual({ ipv4: "1.2.3.4", form: "a Teredo address" });
    for (const plain of ["::1", "::", "2606:4700::1111", "fe80::1"]) expect(embeddedIpv4(plain), plain).toBeUndefined();
  });

  it("paygate's own address: the listen host, and every interface address when listening on all of them", () => {
    const own = selfAddress("192.0.2.5", 8080);
    expect(selfRefusal("192.0.2.5", 8080, own)).toMatch(/paygate's own address/);
    expect(selfRefusal("192.0.2.6", 8080, own)).toBeUndefined();
    expect(selfRefusal("192.0.2.5", 8081, own)).toBeUndefined();
    const everywhere = selfAddress("0.0.0.0", 8080);
    const interfaces = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((entry) => entry.address));
    expect(interfaces.length).toBeGreaterThan(0);
    for (const address of interfaces) expect(selfRefusal(address, 8080, everywhere), address).toMatch(/paygate's own address/);
  });

  it("a name resolving to paygate's own address and port is refused at connect time", async () => {
    const self = selfAddress("127.0.0.1", 4321);
    const resolve = (port: number) =>
      new Promise<Error | null>((done) => guardedLookup("test", port, { self, refuseLoopback: false })("localhost", { all: true }, (error) => done(error)));
    expect((await resolve(4321))?.message).toMatch(/^refused: .*:4321 is paygate's own address/);
    expect(await resolve(4322)).toBeNull();
  });
});

describe("no webhook endpoint may target paygate itself", () => {
  let server: TestServer;
  let m: SeededMerchant;
  let port: string;
  beforeAll(async () => {
    server = await bootServer();
    m = await seedMerchant(server);
    port = new URL(server.url).port;
  });
  afterAll(() => server.stop());

  it("refuses it at registration, under every loopback spelling, and allows other loopback ports", async () => {
    for (const host of ["127.0.0.1", "localhost", "LOCALHOST.", "[::1]", "0.0.0.0", "127.0.0.2", "[::ffff:127.0.0.1]", "app.localhost"]) {
      const res = await server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(m.secret), json: { url: `http://${host}:${port}/admin/merchants`, event_types: ["*"] } });
      expect(res.status, host).toBe(400);
      expect((await res.json()).error, host).toMatchObject({ code: "parameter_invalid", param: "url", message: expect.stringContaining("paygate's own address") });
    }
    const other = await server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(m.secret), json: { url: `http://127.0.0.1:${Number(port) === 65535 ? 1 : Number(port) + 1}/hooks`, event_types: ["*"] } });
    expect(other.status).toBe(201);
  });

  it("refuses it at delivery, for an endpoint stored before the rule", async () => {
    const created = await server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(m.secret), json: { url: "http://127.0.0.1:9/hooks", event_types: ["payment.captured"] } });
    const endpoint = await created.json();
    await server.app.db.updateTable("webhook_endpoints").set({ url: `http://127.0.0.1:${port}/admin/merchants` }).where("id", "=", endpoint.id).execute();

    const test = await server.request(`/v1/webhook_endpoints/${endpoint.id}/test`, { method: "POST", headers: auth(m.secret) });
    expect(await test.json()).toMatchObject({ delivered: false, status_code: null, error: expect.stringMatching(/^refused: 127\.0\.0\.1:\d+ is paygate's own address/) });

    const event = await emitEvent(server, m.merchant.id, "payment.captured");
    const attempts = await firstAttempts(server, event.id, endpoint.id);
    expect(attempts).toEqual([{ status_code: null, error: expect.stringMatching(/^refused: 127\.0\.0\.1:\d+ is paygate's own address/), response_excerpt: null }]);
  });
});
