/**
 * The account set-up docs/processors.md gives for each processor, run as written with the
 * built CLI on a fresh data dir; then paygate serves that data dir in live mode and a sale
 * reaches the processor's fake with the stored credential.
 */
import { describe, expect, it } from "vitest";
import { startNmiFake } from "../fakes/nmi-fake";
import { startStripeFake } from "../fakes/stripe-fake";
import { startTsysFake } from "../fakes/tsys-fake";
import type { FakeServer, RecordedRequest } from "../fakes/http-fake";
import { runCli } from "../support/cli";
import { bootServer, freshDataDir } from "../support/harness";
import { paymentsClient } from "../support/payments";
import { LIVE_CARD } from "./live-suite";

interface Setup {
  connector: "stripe" | "tsys" | "nmi";
  keyKind: string;
  baseUrlEnv: string;
  startFake(): Promise<FakeServer>;
  secret: string;
  /** The secret value the fake must receive. */
  sent(request: RecordedRequest): string | undefined;
  expected: string;
  /** A secret of another processor's shape, which `accounts create` must refuse. */
  wrongShape: string;
}

const SETUPS: Setup[] = [
  {
    connector: "stripe",
    keyKind: "api_key",
    baseUrlEnv: "PAYGATE_STRIPE_BASE_URL",
    startFake: startStripeFake,
    secret: '{"api_key":"sk_live_51CliDocsKey","webhook_secret":"whsec_CliDocsSecret"}',
    sent: (request) => request.headers.authorization,
    expected: "Bearer sk_live_51CliDocsKey",
    wrongShape: "NmiShapedSecretKey42",
  },
  {
    connector: "tsys",
    keyKind: "device_credential",
    baseUrlEnv: "PAYGATE_TSYS_BASE_URL",
    startFake: startTsysFake,
    secret: '{"device_id":"88800000282602","transaction_key":"CliDocsTransactionKey"}',
    sent: (request) => (request.body.Sale as Record<string, string> | undefined)?.transactionKey,
    expected: "CliDocsTransactionKey",
    wrongShape: '{"api_key":"sk_live_WrongShape","webhook_secret":"whsec_WrongShape"}',
  },
  {
    connector: "nmi",
    keyKind: "security_key",
    baseUrlEnv: "PAYGATE_NMI_BASE_URL",
    startFake: startNmiFake,
    secret: "CliDocsSecurityKey7Hq2",
    sent: (request) => (request.path === "/api/transact.php" ? (request.body.security_key as string) : undefined),
    expected: "CliDocsSecurityKey7Hq2",
    wrongShape: '{"device_id":"1","transaction_key":"WrongShapeKey"}',
  },
];

async function cli(args: string[], input?: string): Promise<string> {
  const result = await runCli(args, input === undefined ? {} : { input });
  expect(result.code, `${args.join(" ")}: ${result.stderr}`).toBe(0);
  return result.stdout;
}

describe.each(SETUPS)("setting up a live $connector account with the CLI, as docs/processors.md shows", (setup) => {
  it("stores the secret, creates the default account, and a sale reaches the processor with that credential", async () => {
    const data = freshDataDir();
    // Only serve, sandbox and migrate create a store; the operator's store already exists.
    await cli(["migrate", "--data", data]);
    const merchant = JSON.parse(await cli(["merchants", "create", "--name", `CLI ${setup.connector}`, "--json", "--data", data]));
    const key = JSON.parse(await cli(["keys", "create", "--merchant", merchant.short_id, "--name", "backend", "--mode", "live", "--json", "--data", data])).key as string;
    expect(key).toMatch(/^sk_live_/);
    const path = `${merchant.short_id}/${setup.connector}`;

    // A secret of the wrong shape is refused when the account is created, without echoing it.
    await cli(["secrets", "put", `${path}-wrong`, "--data", data], setup.wrongShape);
    const refused = await runCli(["accounts", "create", "--merchant", merchant.short_id, "--connector", setup.connector, "--mode", "live", "--key-kind", setup.keyKind, "--label", "wrong", "--credential-ref", `secret://${path}-wrong`, "--data", data]);
    expect(refused.code).toBe(1);
    expect(refused.stderr + refused.stdout).not.toMatch(/WrongShape|NmiShapedSecretKey42/);

    expect(await cli(["secrets", "put", path, "--data", data], setup.secret)).toContain(`secret://${path}`);
    const account = JSON.parse(
      await cli(["accounts", "create", "--merchant", merchant.short_id, "--connector", setup.connector, "--mode", "live", "--key-kind", setup.keyKind, "--label", "main", "--credential-ref", `secret://${path}`, "--default", "--json", "--data", data]),
    );
    expect(account).toMatchObject({ connector_id: setup.connector, mode: "live", key_kind: setup.keyKind, is_default: true, credential_ref: `secret://${path}` });
    expect(JSON.stringify(account)).not.toContain(setup.expected);

    const fake = await setup.startFake();
    const server = await bootServer({ dataDir: data, env: { [setup.baseUrlEnv]: fake.baseUrl, PAYGATE_CONNECTOR_TIMEOUT: "2s" } });
    try {
      const client = paymentsClient(server, key);
      const sold = await client.sale({ amount: 1999, gateway_token: await client.token(LIVE_CARD) });
      const payment = await sold.json();
      expect(sold.status, JSON.stringify(payment)).toBe(201);
      expect(payment).toMatchObject({ status: "succeeded", connector_id: setup.connector, connector_account_short_id: account.short_id, test_mode: false });
      const sent = fake.requests.map(setup.sent).filter((value) => value !== undefined);
      expect(sent).toEqual([setup.expected]);
    } finally {
      await server.stop();
      await fake.close();
    }
  });
});
