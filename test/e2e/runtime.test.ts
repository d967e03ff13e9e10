import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const EXECUTABLE = resolve(__dirname, "../../dist/paygate");
const pkg = JSON.parse(readFileSync(resolve(__dirname, "../../package.json"), "utf8")) as { version: string; config: { executableNode: string } };
const NODE = `v${pkg.config.executableNode}`;

/** The runtime the executable carries: the pinned Node, its addon, its built-in heap bounds. */
describe("dist/paygate runtime", () => {
  let workDir: string;

  beforeAll(() => {
    expect(existsSync(EXECUTABLE), "run `npm run package` first").toBe(true);
    workDir = mkdtempSync(join(tmpdir(), "paygate-e2e-runtime-"));
    copyFileSync(EXECUTABLE, join(workDir, "paygate"));
  });
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  const run = (args: string[], env: Record<string, string> = {}) => {
    const result = spawnSync("./paygate", args, { cwd: workDir, env: { PATH: "/usr/bin:/bin", TMPDIR: workDir, ...env }, encoding: "utf8", timeout: 30_000 });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr };
  };
  const selfCheck = (env: Record<string, string> = {}) => {
    const result = run(["self-check"], env);
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as { version: string; node: string; sqlite: string; heap_limit_mb: number; code_cache: string };
  };

  it("names paygate's version and the pinned Node", () => {
    const result = run(["--version"]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(`paygate ${pkg.version} (node ${NODE})`);
    expect(NODE).toMatch(/^v24\./);
  });

  it("creates a database with the embedded addon under the embedded Node", () => {
    expect(selfCheck()).toMatchObject({ version: pkg.version, node: NODE, sqlite: expect.stringMatching(/^3\.\d+\.\d+$/) });
  });

  // scripts/sea-main.cjs: a cache V8 rejects (another Node, other flags) would only
  // make every start slower, silently.
  it("runs its bundle from the embedded code cache, also with NODE_OPTIONS", () => {
    expect(selfCheck().code_cache).toBe("accepted");
    expect(selfCheck({ NODE_OPTIONS: "--max-old-space-size=1024" }).code_cache).toBe("accepted");
  });

  it("bounds its heap by default and lets NODE_OPTIONS raise the bound", () => {
    const bounded = selfCheck().heap_limit_mb;
    expect(bounded).toBeLessThan(128);
    expect(selfCheck({ NODE_OPTIONS: "--max-old-space-size=1024" }).heap_limit_mb).toBeGreaterThanOrEqual(1024);
  });

  // better-sqlite3 12.x built with Node >= 24.19 headers aborted here (exit 134,
  // "Assertion failed: (env) != nullptr" from Statement::~Statement) when V8 finalized
  // a statement at teardown; which heap settings trigger it depends on GC timing.
  it.each(["", "--max-semi-space-size=1", "--max-old-space-size=200"])("exits cleanly after using the database (NODE_OPTIONS=%j)", (options) => {
    const result = run(["self-check"], options ? { NODE_OPTIONS: options } : {});
    expect(result.stderr).not.toContain("Assertion failed");
    expect(result.code).toBe(0);
  });
});
