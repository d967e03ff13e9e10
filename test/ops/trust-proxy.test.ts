import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCliServer } from "../support/cli";
import { bootServer, freshDataDir, type TestServer } from "../support/harness";

const FORWARDED = { "x-forwarded-for": "203.0.113.9, 198.51.100.7", "x-forwarded-proto": "https" };

/** The request log line of `requestId`. */
function logLine(log: string, requestId: string): Record<string, unknown> {
  const line = log
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.msg === "request" && l.request_id === requestId);
  if (!line) throw new Error(`no request line for ${requestId}`);
  return line;
}

const LOOPBACK = /^(::ffff:)?127\.0\.0\.1$/;

describe("client address without --trust-proxy (the default)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await bootServer();
  });
  afterAll(() => server.stop());

  it("logs the socket's address and scheme and ignores forwarding headers", async () => {
    await server.request("/health", { headers: { ...FORWARDED, "x-request-id": "untrusted-1" } });
    const line = logLine(server.readLog(), "untrusted-1");
    expect(line.client_ip).toMatch(LOOPBACK);
    expect(line.scheme).toBe("http");
  });
});

describe("client address with PAYGATE_TRUST_PROXY=1", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await bootServer({ env: { PAYGATE_TRUST_PROXY: "1" } });
  });
  afterAll(() => server.stop());

  it("takes the right-most X-Forwarded-For entry (the one the proxy added) and X-Forwarded-Proto", async () => {
    await server.request("/health", { headers: { ...FORWARDED, "x-request-id": "trusted-1" } });
    expect(logLine(server.readLog(), "trusted-1")).toMatchObject({ client_ip: "198.51.100.7", scheme: "https" });
  });

  it("falls back to the socket for a missing or malformed header", async () => {
    await server.request("/health", { headers: { "x-request-id": "trusted-2" } });
    await server.request("/health", { headers: { "x-forwarded-for": "1.2.3.4, not-an-ip", "x-forwarded-proto": "gopher", "x-request-id": "trusted-3" } });
    const log = server.readLog();
    for (const id of ["trusted-2", "trusted-3"]) {
      expect(logLine(log, id).client_ip).toMatch(LOOPBACK);
      expect(logLine(log, id).scheme).toBe("http");
    }
  });

  it("logs the forwarded address on errors outside any route too", async () => {
    await server.request("/nowhere", { headers: { ...FORWARDED, "x-request-id": "trusted-4" } });
    expect(logLine(server.readLog(), "trusted-4")).toMatchObject({ client_ip: "198.51.100.7", status: 404 });
  });
});

describe("serve --trust-proxy", () => {
  it("turns it on from the command line", async () => {
    const dataDir = freshDataDir();
    const server = await startCliServer(["serve", "--port", "0", "--data", dataDir, "--trust-proxy", "--log-level", "info"]);
    await fetch(`${server.url}/health`, { headers: { ...FORWARDED, "x-request-id": "cli-trusted" } }).finally(() => server.stop());
    // Read after the stop: the request log is flushed at shutdown at the latest.
    const line = server
      .output()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.request_id === "cli-trusted");
    rmSync(dataDir, { recursive: true, force: true });
    expect(line).toMatchObject({ client_ip: "198.51.100.7", scheme: "https" });
  });
});
