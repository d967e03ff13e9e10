import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { dumpAllRows } from "./dump-rows";
import { TEST_ENGINE } from "./harness";
import { openTestStore } from "./test-store";

/**
 * The raw bytes of every database file in `dataDir` (the database, its WAL and shared
 * memory), for "never stored" scans. Fails when the database is not there or empty, so
 * a scan can never pass by reading nothing; callers also check that something they did
 * write is found (`expectStored`), proving the scan sees where the data went.
 */
export function rawDatabaseFiles(dataDir: string): string {
  const files = readdirSync(dataDir).filter((f) => f.startsWith("paygate.db"));
  expect(files).toContain("paygate.db");
  const buffers = files.map((f) => readFileSync(join(dataDir, f)));
  expect(buffers[files.indexOf("paygate.db")]?.length).toBeGreaterThan(0);
  return buffers.map((b) => b.toString("latin1")).join("");
}

/**
 * What the data dir's store holds, for "never stored" scans on either engine: the raw
 * files on SQLite; on PostgreSQL, whose files are the server's, every row of every
 * table read through the store.
 */
export async function storedData(dataDir: string): Promise<string> {
  if (TEST_ENGINE === "sqlite") return rawDatabaseFiles(dataDir);
  const store = await openTestStore(dataDir);
  try {
    const dump = await dumpAllRows(store.db);
    expect(dump.rows).toBeGreaterThan(0);
    return dump.text;
  } finally {
    await store.close();
  }
}

/** The scan's positive control: values the test wrote must be in what it scans. */
export function expectStored(contents: string, ...written: string[]): void {
  for (const value of written) expect(contents, `the scanned files do not hold ${value}`).toContain(value);
}
