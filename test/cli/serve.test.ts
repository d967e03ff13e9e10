import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { emptyEngineData, freshDataDir } from "../support/harness";
import { runCli, startCliServer } from "../support/cli";

const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };

describe("paygate CLI basics", () => {
  it("prints its version and the Node it runs on", async () => {
    const result = await runCli(["--version"]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(`paygate ${version} (node ${process.version})`);
  });

  it("self-check creates a throwaway database and reports the runtime", async () => {
    const result = await runCli(["self-check"], { env: { NODE_OPTIONS: "--max-old-space-size=200" } });
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(report).toEqual({ version, node: process.version, sqlite: expect.stringMatching(/^3\.\d+\.\d+$/), heap_limit_mb: expect.any(Number), code_cache: "none" });
    // The old space asked for plus a young generation, whose default size varies by Node.
    expect(report.heap_limit_mb).toBeGreaterThanOrEqual(200);
    expect(report.heap_limit_mb).toBeLessThan(1024);
  });

  it("exits 2 on bad usage", async () => {
    const unknownCommand = await runCli(["frobnicate"]);
    expect(unknownCommand.code).toBe(2);
    const unknownOption = await runCli(["serve", "--no-such-flag"]);
    expect(unknownOption.code).toBe(2);
  });

  it("exits 1 with one line naming a bad setting", async () => {
    const result = await runCli(["serve", "--data", freshDataDir()], { env: { PAYGATE_PORT: "eighty" } });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain("PAYGATE_PORT");
    const badKey = await runCli(["serve", "--port", "0", "--data", freshDataDir()], { env: { PAYGATE_MASTER_KEY: "short" } });
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toContain("PAYGATE_MASTER_KEY");
  });

  it("migrates a data dir", async () => {
    const data = freshDataDir();
    await emptyEngineData(data);
    const first = await runCli(["migrate", "--data", data]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("001_init");
    const again = await runCli(["migrate", "--data", data]);
    expect(again.stdout).toContain("up to date");
  });

  it("serves on a free port, answers /health, and exits 0 on SIGTERM", async () => {
    const server = await startCliServer(["serve", "--port", "0", "--data", freshDataDir()]);
    const res = await fetch(`${server.url}/health/ready`);
    expect(res.status).toBe(200);
    const code = await server.stop("SIGTERM");
    expect(code, server.output()).toBe(0);
  });

  it("exits 0 on SIGINT too", async () => {
    const server = await startCliServer(["serve", "--port", "0", "--data", freshDataDir()]);
    const code = await server.stop("SIGINT");
    expect(code, server.output()).toBe(0);
  });

  it("refuses a port that is taken instead of picking another", async () => {
    const first = await startCliServer(["serve", "--port", "0", "--data", freshDataDir()]);
    const port = new URL(first.url).port;
    try {
      const second = await runCli(["serve", "--port", port, "--data", freshDataDir()]);
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`port ${port}`);
      expect(second.stderr).toContain("already in use");
    } finally {
      await first.stop();
    }
  });
});
