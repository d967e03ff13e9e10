import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { resolve } from "node:path";
import { testEnv } from "./harness";

/** The built bundle (`npm test` builds it first, see `pretest`). */
export const BUNDLE = resolve(__dirname, "../../dist/paygate.cjs");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cliEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...testEnv(), PAYGATE_LOG_LEVEL: "warn", ...env };
}

/** Runs one CLI command to completion. */
export function runCli(args: string[], options: { env?: Record<string, string>; input?: string; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BUNDLE, ...args], { env: cliEnv(options.env ?? {}), cwd: options.cwd });
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
export function startCliServer(args: string[], options: { env?: Record<string, string> } = {}): Promise<CliServer> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BUNDLE, ...args], { env: cliEnv(options.env ?? {}) });
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
