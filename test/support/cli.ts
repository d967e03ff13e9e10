import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { engineEnv, testEnv } from "./harness";

/** The built bundle (`npm test` builds it first, see `pretest`). */
export const BUNDLE = resolve(__dirname, "../../dist/paygate.cjs");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The command's environment. On the postgres project a command given an existing data
 * dir works on that dir's database, as a server booted on the dir does (a missing dir
 * stays a missing dir: the command must refuse it).
 */
async function cliEnv(args: string[], env: Record<string, string>): Promise<NodeJS.ProcessEnv> {
  const flag = args.indexOf("--data");
  const dataDir = flag >= 0 ? args[flag + 1] : env.PAYGATE_DATA_DIR;
  const engine = dataDir && existsSync(dataDir) ? await engineEnv(dataDir) : {};
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...testEnv(), PAYGATE_LOG_LEVEL: "warn", ...engine, ...env };
}

/** Runs one CLI command to completion. */
export async function runCli(args: string[], options: { env?: Record<string, string>; input?: string; cwd?: string } = {}): Promise<CliResult> {
  const env = await cliEnv(args, options.env ?? {});
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BUNDLE, ...args], { env, cwd: options.cwd });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

export interface CliServer {
  child: ChildProcessWithoutNullStreams;
  url: string;
  output(): string;
  /** Sends `signal` and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `paygate serve …` (or `sandbox`) and waits for its `listening on` line. */
export async function startCliServer(args: string[], options: { env?: Record<string, string> } = {}): Promise<CliServer> {
  const env = await cliEnv(args, options.env ?? {});
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BUNDLE, ...args], { env });
    let out = "";
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`server did not start: ${out}`));
    }, 15_000);
    const onData = (d: Buffer) => {
      out += d;
      const match = /listening on (https?:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolvePromise({
          child,
          url: match[1] as string,
          output: () => out,
          stop(signal = "SIGTERM") {
            if (child.exitCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (d) => (out += d));
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${out}`));
    });
  });
}
