import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFileSync, chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { migrate } from "../../store/database";
import { openPostgresStore } from "../../store/postgres-store";

/**
 * A throwaway PostgreSQL cluster for one vitest run: `initdb` and `pg_ctl` from the
 * Debian `postgresql` package, in a temp dir, on a free loopback port, run as the
 * `postgres` user when the tests run as root (PostgreSQL refuses to run as root).
 */

/** The newest installed PostgreSQL's bin dir, or undefined when none is installed. */
export function postgresBinDir(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] && join(root, versions[0], "bin");
}

export const TEMPLATE_DATABASE = "paygate_template";

export interface Cluster {
  /** Superuser URL of the `postgres` maintenance database. */
  adminUrl: string;
  dataDir: string;
  /** pg_ctl stop -m fast / start: the database goes away and comes back on the same port. */
  stop(): void;
  start(): void;
  destroy(): void;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

const asRoot = process.getuid?.() === 0;

/** Runs a PostgreSQL program, as the `postgres` user when we are root. */
function run(bin: string, program: string, args: string[]): void {
  const command = asRoot ? ["runuser", ["-u", "postgres", "--", join(bin, program), ...args]] : [join(bin, program), args];
  const result = spawnSync(command[0] as string, command[1] as string[], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (result.status !== 0) throw new Error(`${program} failed: ${result.stderr || result.stdout}`);
}

export async function startCluster(): Promise<Cluster> {
  const bin = postgresBinDir();
  if (!bin) throw new Error("PostgreSQL is not installed (apt-get install -y postgresql)");
  const root = mkdtempSync(join(tmpdir(), "paygate-pg-"));
  const dataDir = join(root, "data");
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    chownSync(root, uid, gid);
  }
  chmodSync(root, 0o700);
  const port = await freePort();
  run(bin, "initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync", "--locale=C"]);
  // In the configuration, not on the command line, so a plain `pg_ctl start` brings it back.
  // Test speed only: fsync off loses nothing a test reads back while the cluster runs.
  appendFileSync(
    join(dataDir, "postgresql.conf"),
    `\nport = ${port}\nunix_socket_directories = '${root}'\nlisten_addresses = '127.0.0.1'\nfsync = off\nmax_connections = 400\nshared_buffers = 32MB\n`,
  );
  const start = () => run(bin, "pg_ctl", ["-D", dataDir, "-w", "-l", join(root, "log"), "start"]);
  start();
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir,
    start,
    stop: () => run(bin, "pg_ctl", ["-D", dataDir, "-w", "-m", "fast", "stop"]),
    destroy() {
      try {
        run(bin, "pg_ctl", ["-D", dataDir, "-w", "-m", "immediate", "stop"]);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  };
}

/** The URL of database `name` on the cluster whose admin URL is given. */
export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates the template every test database is copied from, with every migration applied. */
export async function createTemplate(adminUrl: string): Promise<void> {
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`));
  const store = openPostgresStore(databaseUrl(adminUrl, TEMPLATE_DATABASE), 1);
  try {
    await migrate(store.db);
  } finally {
    await store.close();
  }
}

/** Names of the databases this helper made: lowercase letters and digits only, so they need no quoting. */
const freshName = () => `paygate_test_${randomBytes(6).toString("hex")}`;

/**
 * A new, migrated database of its own (a copy of the template, which is fast) and its
 * URL. The copy fails while anyone is connected to the template, so it is retried.
 */
export async function createTestDatabase(adminUrl: string, options: { empty?: boolean } = {}): Promise<string> {
  const name = freshName();
  await admin(adminUrl, async (c) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await c.query(options.empty ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`);
        return;
      } catch (error) {
        if ((error as { code?: string }).code !== "55006" || attempt >= 50) throw error;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  });
  return databaseUrl(adminUrl, name);
}

/** Drops a database made by `createTestDatabase`, closing whatever connections are left. */
export async function dropTestDatabase(adminUrl: string, url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  if (!/^paygate_test_[0-9a-f]+$/.test(name)) throw new Error(`refusing to drop ${name}`);
  await admin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}
