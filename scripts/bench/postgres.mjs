// The bench's PostgreSQL: PAYGATE_BENCH_DATABASE_URL (a database the bench may fill),
// else a throwaway cluster (initdb/pg_ctl of the installed `postgresql` package, run as
// the `postgres` user when we are root) in a temp dir on a free port, removed at exit.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

function binDir() {
  const root = "/usr/lib/postgresql";
  const version = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "initdb"))).sort((a, b) => b - a)[0] : undefined;
  if (!version) throw new Error("--postgres: PostgreSQL is not installed (apt-get install -y postgresql), and PAYGATE_BENCH_DATABASE_URL is not set");
  return join(root, version, "bin");
}

const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });

/** Resolves with `{ url, stop() }`: a database URL for the bench and how to clean up. */
export async function benchDatabase() {
  if (process.env.PAYGATE_BENCH_DATABASE_URL) return { url: process.env.PAYGATE_BENCH_DATABASE_URL, stop() {} };
  const bin = binDir();
  const asRoot = process.getuid?.() === 0;
  const run = (program, args) => {
    const [command, commandArgs] = asRoot ? ["runuser", ["-u", "postgres", "--", join(bin, program), ...args]] : [join(bin, program), args];
    const result = spawnSync(command, commandArgs, { encoding: "utf8" });
    if (result.status !== 0) throw new Error(`${program} failed: ${result.stderr || result.stdout}`);
  };
  const root = mkdtempSync(join(tmpdir(), "paygate-bench-pg-"));
  if (asRoot) chownSync(root, Number(execFileSync("id", ["-u", "postgres"]).toString()), Number(execFileSync("id", ["-g", "postgres"]).toString()));
  chmodSync(root, 0o700);
  const data = join(root, "data");
  const port = await freePort();
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"]);
  // Durable like production (fsync and synchronous_commit on, the defaults): the figures compare with SQLite's synchronous=FULL.
  run("pg_ctl", ["-D", data, "-w", "-l", join(root, "log"), "-o", `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c max_connections=200`, "start"]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run("pg_ctl", ["-D", data, "-w", "-m", "immediate", "stop"]);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}
