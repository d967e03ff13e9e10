/**
 * Several `paygate serve` processes of the bundle on one PostgreSQL database: what a
 * deployment behind a load balancer is. Seeded through the CLI, as an operator would.
 */
import { rmSync } from "node:fs";
import { expect } from "vitest";
import type { Db, Store } from "../../store/database";
import { openStore } from "../../store/open-store";
import { startStripeFake, type StripeFake } from "../fakes/stripe-fake";
import { runCli, startCliServer, type CliServer } from "../support/cli";
import { dropEngineData, engineEnv, freshDataDir, TEST_ENGINE } from "../support/harness";

/** These files prove what PostgreSQL does for several instances; SQLite has its own cross-process tests. */
export const ON_POSTGRES = TEST_ENGINE === "postgres";

export interface Deployment {
  servers: CliServer[];
  /** The shared database, for assertions. */
  db: Db;
  stripe: StripeFake;
  /** A live secret key of the seeded merchant, whose default account is the Stripe fake. */
  key: string;
  merchantShortId: string;
  env: Record<string, string>;
  dataDir: string;
  /** Starts one more instance on the database. */
  startInstance(): Promise<CliServer>;
  close(): Promise<void>;
}

async function cli(args: string[], env: Record<string, string>, input?: string): Promise<string> {
  const result = await runCli(args, { env, ...(input === undefined ? {} : { input }) });
  expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

export async function startDeployment(options: { instances?: number; env?: Record<string, string>; databaseUrl?: string } = {}): Promise<Deployment> {
  const dataDir = freshDataDir();
  const stripe = await startStripeFake();
  const engine = options.databaseUrl ? { PAYGATE_DATABASE_URL: options.databaseUrl } : await engineEnv(dataDir);
  const env = { ...engine, PAYGATE_STRIPE_BASE_URL: stripe.baseUrl, PAYGATE_CONNECTOR_TIMEOUT: "10s", ...options.env };
  const merchant = JSON.parse(await cli(["merchants", "create", "--name", "Multi shop", "--json"], env));
  const key = JSON.parse(await cli(["keys", "create", "--merchant", merchant.short_id, "--name", "backend", "--mode", "live", "--json"], env)).key as string;
  await cli(["secrets", "put", "multi/stripe"], env, '{"api_key":"sk_live_MultiKey","webhook_secret":"whsec_MultiSecret"}');
  await cli(["accounts", "create", "--merchant", merchant.short_id, "--connector", "stripe", "--mode", "live", "--key-kind", "api_key", "--label", "main", "--credential-ref", "secret://multi/stripe", "--default"], env);
  const startInstance = () => startCliServer(["serve", "--port", "0", "--data", dataDir], { env });
  const servers = await Promise.all(Array.from({ length: options.instances ?? 3 }, startInstance));
  const store: Store = openStore({ dataDir, databaseUrl: engine.PAYGATE_DATABASE_URL }, {});
  return {
    servers,
    db: store.db,
    stripe,
    key,
    merchantShortId: merchant.short_id,
    env,
    dataDir,
    startInstance,
    async close() {
      await Promise.all(servers.map((server) => server.stop()));
      await store.close();
      await stripe.close();
      if (!options.databaseUrl) await dropEngineData(dataDir);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

let sequence = 0;
/** A fresh Idempotency-Key, unique in the run. */
export const freshKey = (label: string): string => `${label}-${process.pid}-${Date.now()}-${++sequence}`;

export interface Answer {
  status: number;
  body: any;
}

/** POSTs `body` to one instance with the deployment's key. */
export async function post(server: CliServer, key: string, path: string, body: unknown, idempotencyKey = freshKey("mi")): Promise<Answer> {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "idempotency-key": idempotencyKey, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

export const LIVE_CARD = { number: "5555555555554444", exp_month: 12, exp_year: new Date().getUTCFullYear() + 2, cvc: "123" };
