import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUNDLE } from "../support/cli";
import { freshDataDir } from "../support/harness";

const README = resolve(__dirname, "../../README.md");
const SKIP_MARKER = /#\s*readme-test:\s*skip\s*\(([^)]+)\)/;

interface Block {
  line: number;
  code: string;
  skip: string | undefined;
}

/** Every ```sh and ```bash block of the README, with the line it starts on. */
function shellBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^```(sh|bash)\s*$/.test(lines[i] as string)) continue;
    const start = i + 1;
    const body: string[] = [];
    for (i = start; i < lines.length && !(lines[i] as string).startsWith("```"); i++) body.push(lines[i] as string);
    const code = body.join("\n");
    blocks.push({ line: start, code, skip: SKIP_MARKER.exec(code)?.[1] });
  }
  return blocks;
}

function run(command: string, args: string[], options: { cwd?: string; env: NodeJS.ProcessEnv }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}

describe("every shell command in the README runs as written", () => {
  const blocks = shellBlocks(readFileSync(README, "utf8"));
  const work = freshDataDir();
  const bin = join(work, "bin");
  const data = join(work, "sandbox-data");
  let sandbox: ReturnType<typeof spawn> | undefined;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    mkdirSync(bin);
    // The README's own way of putting the bundle on PATH: a two-line wrapper.
    writeFileSync(join(bin, "paygate"), `#!/bin/sh\nexec "${process.execPath}" "${BUNDLE}" "$@"\n`);
    chmodSync(join(bin, "paygate"), 0o755);
    const base = { PATH: `${bin}:${process.env.PATH}`, HOME: process.env.HOME };
    const child = spawn(join(bin, "paygate"), ["sandbox", "--json", "--port", "0", "--data", data], { env: base, cwd: work });
    sandbox = child;
    const info = await new Promise<{ base_url: string; keys: { secret: string; publishable: string; admin: string }; merchant: { short_id: string } }>((done, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`sandbox did not start: ${out}`)), 15_000);
      child.stdout?.on("data", (d) => {
        out += d;
        const newline = out.indexOf("\n");
        if (newline >= 0) {
          clearTimeout(timer);
          done(JSON.parse(out.slice(0, newline)));
        }
      });
      child.on("exit", (code) => reject(new Error(`sandbox exited with ${code}`)));
    });
    env = { ...base, BASE: info.base_url, SK: info.keys.secret, PK: info.keys.publishable, ADMIN: info.keys.admin, MRC: info.merchant.short_id, PAYGATE_DATA_DIR: data };
  });
  afterAll(() => {
    sandbox?.kill("SIGTERM");
  });

  it("finds the blocks, and skips only the few marked with a reason", () => {
    expect(blocks.length).toBeGreaterThan(8);
    const skipped = blocks.filter((b) => b.skip !== undefined);
    // Foreground servers, live credentials and stopped deployments cannot run here; every
    // other block must. Raise this only for a block of that kind.
    expect(skipped.length).toBeLessThanOrEqual(12);
    for (const block of blocks) expect(block.code, `README line ${block.line}`).not.toMatch(/uuidgen|\.\/bin\/paygate|\.\/paygate /);
  });

  it("runs the rest in order in one shell, like a reader's terminal, each exiting 0 without an API error", async () => {
    const script = ["set -e -o pipefail"];
    for (const block of blocks.filter((b) => b.skip === undefined)) {
      script.push(`echo "README block at line ${block.line}" >&2`, `echo "::block ${block.line}"`, block.code);
    }
    const result = await run("bash", ["-c", script.join("\n")], { cwd: work, env });
    const failedAt = /README block at line (\d+)\n(?![\s\S]*README block at line)/.exec(result.stderr)?.[1];
    expect(result.code, `exit ${result.code} in the README block at line ${failedAt}:\n${result.stderr.slice(-3000)}`).toBe(0);
    for (const output of result.stdout.split("::block ").slice(1)) {
      const [line] = output.split("\n", 1);
      expect(output, `API error from the README block at line ${line}`).not.toMatch(/"error":\{"type"/);
    }
  }, 120_000);

  it("the CI recipe fails fast, with the log, when the sandbox cannot start", async () => {
    const recipe = blocks.find((b) => b.code.includes("paygate sandbox --json --port 0"));
    expect(recipe).toBeDefined();
    const broken = join(work, "broken-bin");
    mkdirSync(broken);
    writeFileSync(join(broken, "paygate"), '#!/bin/sh\necho "paygate: port 8080 on 127.0.0.1 is already in use" >&2\nexit 1\n');
    chmodSync(join(broken, "paygate"), 0o755);
    const started = Date.now();
    const result = await run("bash", ["-c", (recipe as Block).code], { cwd: freshDataDir(), env: { PATH: `${broken}:${process.env.PATH}`, HOME: process.env.HOME } });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("already in use");
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 30_000);
});
