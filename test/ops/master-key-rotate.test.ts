import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Cipher } from "../../server/secrets/cipher";
import { secretAad } from "../../server/secrets/secret-store";
import { panAad } from "../../server/tokens/tokenize";
import { openSqliteStore } from "../../store/sqlite-store";
import { startStripeFake, type StripeFake } from "../fakes/stripe-fake";
import { startWebhookReceiver, verifySignature, type WebhookReceiver } from "../fakes/webhook-receiver";
import { liveMerchant } from "../payments/live-account";
import { runCli } from "../support/cli";
import { bootServer, freshDataDir, type TestServer } from "../support/harness";
import { paymentsClient, seedSandboxMerchant } from "../support/payments";
import { auth } from "../support/seed";
import { createEndpoint, emitEvent } from "../webhooks/support";

/** The data dir's master.key, not PAYGATE_MASTER_KEY. */
const FILE_KEY = { PAYGATE_MASTER_KEY: "" };
const keyFile = (dir: string) => join(dir, "master.key");
const readKey = (dir: string) => Buffer.from(readFileSync(keyFile(dir), "utf8").trim(), "base64");

/** Which of the store's ciphertexts `key` decrypts: every kind, every row. */
async function decryptable(dataDir: string, key: Buffer): Promise<{ ok: number; failed: number }> {
  const store = openSqliteStore(dataDir);
  const cipher = new Cipher(key);
  const tally = { ok: 0, failed: 0 };
  const attempt = (sealed: string, aad: string) => {
    try {
      cipher.decrypt(sealed, aad);
      tally.ok++;
    } catch {
      tally.failed++;
    }
  };
  try {
    for (const r of await store.db.selectFrom("secrets").selectAll().execute()) attempt(r.ciphertext, secretAad(r.path, r.version));
    for (const r of await store.db.selectFrom("card_tokens").selectAll().execute()) attempt(r.pan_encrypted, panAad(r.token));
    for (const r of await store.db.selectFrom("webhook_endpoints").selectAll().execute()) {
      attempt(r.secret_encrypted, r.id);
      if (r.previous_secret_encrypted) attempt(r.previous_secret_encrypted, r.id);
    }
  } finally {
    await store.close();
  }
  return tally;
}

describe("paygate master-key rotate (the data dir's master.key)", () => {
  let stripe: StripeFake;
  let receiver: WebhookReceiver;
  let server: TestServer | undefined;
  let dataDir: string;
  let oldKey: Buffer;
  let rotation: Awaited<ReturnType<typeof runCli>>;
  let live: Awaited<ReturnType<typeof liveMerchant>>;
  let sandboxKey: string;
  let merchantId: string;
  let sandboxToken: string;
  let webhookSecrets: string[];

  beforeAll(async () => {
    stripe = await startStripeFake();
    receiver = await startWebhookReceiver();
    dataDir = freshDataDir();
    const env = { ...FILE_KEY, PAYGATE_STRIPE_BASE_URL: stripe.baseUrl };
    const first = await bootServer({ dataDir, env });
    live = await liveMerchant(first, "stripe");
    const shop = await seedSandboxMerchant(first);
    sandboxKey = shop.secret;
    merchantId = shop.merchant.id;
    sandboxToken = await paymentsClient(first, sandboxKey).token();
    const beforeRotation = await paymentsClient(first, sandboxKey).sale({ amount: 4100, gateway_token: sandboxToken }, { "idempotency-key": "sale-before-rotation" });
    expect(beforeRotation.status).toBe(201);
    const endpoint = await createEndpoint(first, sandboxKey, { url: receiver.url, event_types: ["payment.captured"] });
    const rotated = await (await first.request(`/v1/webhook_endpoints/${endpoint.id}/rotate_secret`, { method: "POST", headers: auth(sandboxKey), json: {} })).json();
    webhookSecrets = [endpoint.secret, rotated.secret];
    const blocked = await runCli(["master-key", "rotate", "--data", dataDir], { env: FILE_KEY });
    expect(blocked.code, "refused while a server has the store open").toBe(1);
    expect(blocked.stderr).toMatch(/open in another process/);
    await first.close();
    oldKey = readKey(dataDir);
    rotation = await runCli(["master-key", "rotate", "--data", dataDir], { env: FILE_KEY });
    server = await bootServer({ dataDir, env });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await receiver.close();
    await stripe.close();
  });

  it("re-encrypts every secret version, card number and webhook secret under a new key file", async () => {
    expect(rotation.code, rotation.stderr).toBe(0);
    expect(rotation.stdout).toMatch(/re-encrypted 2 secret versions, 2 card numbers, 2 webhook signing secrets/);
    const newKey = readKey(dataDir);
    expect(newKey.equals(oldKey)).toBe(false);
    expect(existsSync(join(dataDir, "master.key.next"))).toBe(false);
    expect(await decryptable(dataDir, newKey)).toEqual({ ok: 6, failed: 0 });
    expect(await decryptable(dataDir, oldKey)).toEqual({ ok: 0, failed: 6 });
  });

  it("the restarted server charges through a rotated stripe secret with a token made before the rotation", async () => {
    const before = stripe.requests.length;
    const res = await paymentsClient(server as TestServer, live.live.secret).sale({ amount: 4200, gateway_token: live.token });
    expect(res.status, await res.clone().text()).toBe(201);
    expect(stripe.requests.length).toBeGreaterThan(before);
    expect(stripe.requests.at(-1)?.headers.authorization).toBe("Bearer sk_live_fake");
    const sandbox = await paymentsClient(server as TestServer, sandboxKey).sale({ amount: 4300, gateway_token: sandboxToken });
    expect(sandbox.status).toBe(201);
  });

  it("replays an answer stored before the rotation: the fingerprints, keyed from the old key, were forgotten, not left to mismatch", async () => {
    const retry = await paymentsClient(server as TestServer, sandboxKey).sale({ amount: 4100, gateway_token: sandboxToken }, { "idempotency-key": "sale-before-rotation" });
    expect(retry.status, await retry.clone().text()).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
  });

  it("signs webhooks with the endpoint's secrets from before the rotation (current and previous)", async () => {
    const event = await emitEvent(server as TestServer, merchantId, "payment.captured");
    const [hit] = await receiver.waitUntil((got) => got.some((h) => h.headers["x-service-event-id"] === event.id));
    const header = hit?.headers["x-service-signature"] as string;
    for (const secret of webhookSecrets) expect(verifySignature(secret, header, hit?.raw as string)).toBe(true);
  });

  it("refuses the old key afterwards", async () => {
    await server?.close();
    const withOld = await runCli(["master-key", "rotate", "--data", dataDir], {
      env: { PAYGATE_MASTER_KEY: oldKey.toString("base64"), PAYGATE_NEW_MASTER_KEY: randomBytes(32).toString("base64") },
    });
    expect(withOld.code).toBe(1);
    expect(withOld.stderr).toMatch(/invalid PAYGATE_MASTER_KEY: it is not the master key the data in .* was encrypted with/);
    const startWithOld = await runCli(["merchants", "list", "--data", dataDir], { env: { PAYGATE_MASTER_KEY: oldKey.toString("base64") } });
    expect(startWithOld.code, "the canary, re-encrypted by the rotation, refuses the old key at start").toBe(1);
    expect(startWithOld.stderr).toMatch(/invalid PAYGATE_MASTER_KEY: it is not the master key/);
    server = await bootServer({ dataDir, env: FILE_KEY });
  });
});

describe("a crash mid-rotation", () => {
  for (const [step, survivor] of [
    ["before-commit", "old"],
    ["after-commit", "new"],
  ] as const) {
    it(`at ${step} leaves a store that starts with the ${survivor} key and reads its cards`, async () => {
      const dataDir = freshDataDir();
      const first = await bootServer({ dataDir, env: FILE_KEY });
      const shop = await seedSandboxMerchant(first);
      const token = await paymentsClient(first, shop.secret).token();
      await first.close();
      const oldKey = readKey(dataDir);

      const crashed = await runCli(["master-key", "rotate", "--data", dataDir], { env: { ...FILE_KEY, PAYGATE_TEST_ROTATION_CRASH_AT: step } });
      expect(crashed.code, crashed.stderr).toBeNull();
      expect(existsSync(join(dataDir, "master.key.next"))).toBe(true);
      const nextKey = Buffer.from(readFileSync(join(dataDir, "master.key.next"), "utf8").trim(), "base64");

      const server = await bootServer({ dataDir, env: FILE_KEY });
      try {
        expect(existsSync(join(dataDir, "master.key.next"))).toBe(false);
        expect(readKey(dataDir).equals(survivor === "old" ? oldKey : nextKey)).toBe(true);
        const sale = await paymentsClient(server, shop.secret).sale({ amount: 1500, gateway_token: token });
        expect(sale.status).toBe(201);
      } finally {
        await server.stop();
      }
    }, 30_000);
  }
});

describe("paygate master-key rotate with PAYGATE_MASTER_KEY", () => {
  it("needs the new key from the operator, then the store reads only with it", async () => {
    const dataDir = freshDataDir();
    const first = await bootServer({ dataDir });
    const shop = await seedSandboxMerchant(first);
    const token = await paymentsClient(first, shop.secret).token();
    await first.close();

    const missing = await runCli(["master-key", "rotate", "--data", dataDir]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/--new-key-file or PAYGATE_NEW_MASTER_KEY/);

    const newKey = randomBytes(32).toString("base64");
    const newKeyFile = join(dataDir, "..", `new-key-${process.pid}`);
    writeFileSync(newKeyFile, `${newKey}\n`, { mode: 0o600 });
    const rotated = await runCli(["master-key", "rotate", "--data", dataDir, "--new-key-file", newKeyFile]);
    rmSync(newKeyFile);
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toMatch(/set PAYGATE_MASTER_KEY to the new key/);
    expect(existsSync(keyFile(dataDir))).toBe(false);

    const server = await bootServer({ dataDir, env: { PAYGATE_MASTER_KEY: newKey } });
    try {
      expect((await paymentsClient(server, shop.secret).sale({ amount: 1500, gateway_token: token })).status).toBe(201);
    } finally {
      await server.stop();
    }
  }, 30_000);
});
