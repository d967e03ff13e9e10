import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Written by `serve` in its data dir while it runs, so `paygate status` can tell a server runs on it. */
export const SERVER_FILE = "server.json";

export interface ServerFile {
  pid: number;
  url: string;
  started_at: string;
}

export function writeServerFile(dataDir: string, url: string): () => void {
  const file = join(dataDir, SERVER_FILE);
  const content: ServerFile = { pid: process.pid, url, started_at: new Date().toISOString() };
  writeFileSync(file, `${JSON.stringify(content)}\n`, { mode: 0o600 });
  return () => {
    if (readServerFile(dataDir)?.pid === process.pid) rmSync(file, { force: true });
  };
}

export function readServerFile(dataDir: string): ServerFile | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDir, SERVER_FILE), "utf8")) as ServerFile;
  } catch {
    return undefined;
  }
}

/** Whether `pid` is a live process (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
