import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { BUNDLE } from "../support/cli";
import { testEnv } from "../support/harness";

export interface Listener {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  /** Resolves once `check(stdout lines)` holds. */
  waitForLines(check: (lines: string[]) => boolean, timeoutMs?: number): Promise<string[]>;
  /** Sends SIGINT (Ctrl-C) and resolves with the exit code. */
  interrupt(): Promise<number | null>;
}

const lines = (text: string) => text.split("\n").filter(Boolean);

/** Starts `paygate listen …` and waits for its Ready line. */
export function startListen(args: string[]): Promise<Listener> {
  const child = spawn(process.execPath, [BUNDLE, "listen", ...args], { env: { PATH: process.env.PATH, ...testEnv(), PAYGATE_LOG_LEVEL: "warn" } });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const listener: Listener = {
    child,
    stdout: () => out,
    stderr: () => err,
    async waitForLines(check, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!check(lines(out))) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`listen output never matched; stdout:\n${out}\nstderr:\n${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return lines(out);
    },
    interrupt() {
      if (child.exitCode === null) child.kill("SIGINT");
      return exited;
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      if (err.includes("Ready!")) {
        clearInterval(timer);
        resolve(listener);
      } else if (child.exitCode !== null) {
        clearInterval(timer);
        reject(new Error(`listen exited with ${child.exitCode}: ${err}`));
      }
    }, 25);
  });
}
