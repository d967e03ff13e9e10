import { spawn } from "node:child_process";
import { join } from "node:path";

export interface LockHolder {
  /** Rounds committed so far. */
  rounds(): number;
  stop(): Promise<void>;
}

/**
 * Starts lock-holder.cjs (better-sqlite3 directly, another process) on the database
 * `file` and resolves once it holds the write lock. It holds each round `holdMs`, or
 * 50-200 ms when not given.
 */
export function holdWriteLock(file: string, holdMs?: number): Promise<LockHolder> {
  return new Promise((resolve, reject) => {
    const args = [join(__dirname, "lock-holder.cjs"), file, ...(holdMs === undefined ? [] : [String(holdMs)])];
    const child = spawn(process.execPath, args);
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code, signal) => signal === null && reject(new Error(`lock holder exited with ${code}: ${err}`)));
    child.stdout.on("data", (d) => {
      out += d;
      if (!out.startsWith("holding\n")) return;
      resolve({
        rounds: () => (out.match(/^round \d+$/gm) ?? []).length,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once("exit", () => done());
            child.kill("SIGKILL");
          }),
      });
    });
  });
}
