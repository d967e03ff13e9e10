/**
 * What an operator reads when the PostgreSQL store cannot be used: one line naming the
 * database (never a data dir, never the password) and the cause, instead of
 * "unexpected error (3D000)". PostgreSQL only: these are its failures.
 */
import { createServer } from "node:net";
import { describe, expect, inject, it } from "vitest";
import { runCli } from "../support/cli";
import { engineEnv, freshDataDir, TEST_ENGINE } from "../support/harness";

/** A loopback port nothing listens on: bound, then closed. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const withUrl = (change: (url: URL) => void): string => {
  const url = new URL(inject("postgresAdminUrl"));
  change(url);
  return url.toString();
};

const oneLine = (stderr: string) => {
  expect(stderr.trim().split("\n")).toHaveLength(1);
  expect(stderr).not.toMatch(/unexpected error|secret-pw/);
  return stderr.trim();
};

describe.runIf(TEST_ENGINE === "postgres")("PostgreSQL operator messages", () => {
  it("a wrong master key names the database, not a data dir", async () => {
    const data = freshDataDir();
    const { PAYGATE_DATABASE_URL: url } = await engineEnv(data);
    expect((await runCli(["status", "--data", data])).code).toBe(0);
    const wrong = await runCli(["status", "--data", data], { env: { PAYGATE_MASTER_KEY: Buffer.alloc(32, 9).toString("base64") } });
    expect(wrong.code).toBe(1);
    const line = oneLine(wrong.stderr);
    expect(line).toContain(`it is not the master key the data in the PostgreSQL database ${new URL(url as string).pathname.slice(1)} on ${new URL(url as string).host} was encrypted with`);
    expect(line).not.toContain(data);
  });

  it("an unreachable server: connection refused, with the address tried", async () => {
    const port = await closedPort();
    const result = await runCli(["status"], { env: { PAYGATE_DATABASE_URL: `postgres://paygate:secret-pw@127.0.0.1:${port}/paygate` } });
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toBe(`paygate: cannot reach the PostgreSQL database at 127.0.0.1:${port} (PAYGATE_DATABASE_URL): connection refused`);
  });

  it("a database that does not exist is named", async () => {
    const result = await runCli(["status"], { env: { PAYGATE_DATABASE_URL: withUrl((u) => (u.pathname = "/no_such_db")) } });
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toBe('paygate: PostgreSQL refused the connection (PAYGATE_DATABASE_URL): database "no_such_db" does not exist');
  });

  it("a role that does not exist is named, on migrate too", async () => {
    const url = withUrl((u) => {
      u.username = "no_such_role";
      u.password = "secret-pw";
    });
    const result = await runCli(["migrate"], { env: { PAYGATE_DATABASE_URL: url } });
    expect(result.code).toBe(1);
    expect(oneLine(result.stderr)).toMatch(/^paygate: PostgreSQL refused the connection \(PAYGATE_DATABASE_URL\): .*"no_such_role"/);
  });
});
