import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, type TestServer } from "../support/harness";
import { seedMerchant } from "../support/seed";

/**
 * The database holds payment records, key hashes and stored answers: other local
 * users must not read it, whatever the umask of the process that created it.
 */
describe("database file modes", () => {
  let server: TestServer;
  const umask = process.umask(0o022);
  beforeAll(async () => {
    server = await bootServer();
    await seedMerchant(server);
  });
  afterAll(async () => {
    await server.stop();
    process.umask(umask);
  });

  it("creates paygate.db and its -wal and -shm for the owner only, under umask 022", () => {
    const files = ["paygate.db", "paygate.db-wal", "paygate.db-shm"].map((name) => join(server.dataDir, name));
    for (const file of files) {
      expect(existsSync(file), file).toBe(true);
      expect((statSync(file).mode & 0o777).toString(8), file).toBe("600");
    }
  });
});
