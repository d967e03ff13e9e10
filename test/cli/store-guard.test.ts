import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { freshDataDir } from "../support/harness";
import { runCli, startCliServer } from "../support/cli";

/** One line on stderr, exit 1, naming `path` and the data dir setting. */
function expectOneLineNaming(result: { code: number | null; stderr: string }, path: string): void {
  expect(result.code, result.stderr).toBe(1);
  const lines = result.stderr.trim().split("\n");
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toContain(path);
  expect(lines[0]).toContain("PAYGATE_DATA_DIR");
  expect(lines[0]).not.toContain("unexpected error");
}

describe("the CLI never silently creates a store", () => {
  it("refuses a missing data dir and creates nothing", async () => {
    const missing = join(freshDataDir(), "paygat-dta");
    for (const args of [["webhooks", "list", "--dead"], ["merchants", "list"], ["keys", "list", "--merchant", "mrc_x"], ["secrets", "list"]]) {
      const result = await runCli([...args, "--data", missing]);
      expectOneLineNaming(result, missing);
    }
    expect(existsSync(missing)).toBe(false);
  });

  it("refuses a data dir without paygate.db and leaves it empty", async () => {
    const empty = freshDataDir();
    const result = await runCli(["webhooks", "list", "--dead", "--data", empty]);
    expectOneLineNaming(result, join(empty, "paygate.db"));
    expect(existsSync(join(empty, "paygate.db"))).toBe(false);
  });

  it("names the path when the data dir is a file or the database cannot be opened", async () => {
    const file = join(freshDataDir(), "afile");
    writeFileSync(file, "not a dir");
    expectOneLineNaming(await runCli(["migrate", "--data", file]), file);
    expectOneLineNaming(await runCli(["merchants", "list", "--data", file]), file);
    const broken = freshDataDir();
    mkdirSync(join(broken, "paygate.db"));
    expectOneLineNaming(await runCli(["merchants", "list", "--data", broken]), join(broken, "paygate.db"));
    expectOneLineNaming(await runCli(["migrate", "--data", broken]), join(broken, "paygate.db"));
  });

  it("serve, sandbox and migrate create a store", async () => {
    const data = join(freshDataDir(), "new");
    expect((await runCli(["migrate", "--data", data])).code).toBe(0);
    expect((await runCli(["merchants", "list", "--data", data])).code).toBe(0);
  });

  it("a start that fails on a taken port creates neither the data dir nor master.key", async () => {
    const first = await startCliServer(["serve", "--port", "0", "--data", freshDataDir()]);
    try {
      const data = join(freshDataDir(), "second");
      const second = await runCli(["serve", "--port", new URL(first.url).port, "--data", data], { env: { PAYGATE_MASTER_KEY: "" } });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain("already in use");
      expect(existsSync(data)).toBe(false);
    } finally {
      await first.stop();
    }
  });

  it("serve on an empty store says no merchant or key exists and how to make them", async () => {
    const data = freshDataDir();
    const server = await startCliServer(["serve", "--port", "0", "--data", data]);
    try {
      await expect.poll(() => server.output()).toContain("keys create");
      expect(server.output()).toContain("no merchant or API key exists yet");
      expect(server.output()).toContain("merchants create");
    } finally {
      await server.stop();
    }
    const merchant = JSON.parse((await runCli(["merchants", "create", "--name", "Shop", "--json", "--data", data])).stdout) as { id: string };
    expect((await runCli(["keys", "create", "--merchant", merchant.id, "--name", "k", "--data", data])).code).toBe(0);
    const again = await startCliServer(["serve", "--port", "0", "--data", data]);
    try {
      expect((await fetch(`${again.url}/health/ready`)).status).toBe(200);
      expect(again.output()).not.toContain("exists yet");
    } finally {
      await again.stop();
    }
  });
});
