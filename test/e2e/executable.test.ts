import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebhookReceiver, verifySignature, type WebhookReceiver } from "../fakes/webhook-receiver";
import { futureExpiry } from "../support/expiry";

const EXECUTABLE = resolve(__dirname, "../../dist/paygate");
const CARDS: Record<string, string> = {
  approved: "4242424242424242",
  generic_decline: "4000000000000002",
  insufficient_funds: "4000000000009995",
  expired_card: "4000000000000069",
  incorrect_cvc: "4000000000000127",
};

interface Sandbox {
  base_url: string;
  keys: { secret: string; publishable: string; admin: string };
  connector_account: { id: string; short_id: string };
  data_dir: string;
  webhook: { id: string; url: string; secret: string };
}

/**
 * The packaged executable, as a new user runs it: copied into an empty directory,
 * no node_modules anywhere, no Node on PATH, started as `./paygate sandbox --json`.
 */
describe("dist/paygate sandbox, end to end", () => {
  let workDir: string;
  let child: ChildProcessWithoutNullStreams;
  let sandbox: Sandbox;
  let receiver: WebhookReceiver;
  let stderr = "";

  beforeAll(async () => {
    expect(existsSync(EXECUTABLE), "run `npm run package` first").toBe(true);
    workDir = mkdtempSync(join(tmpdir(), "paygate-e2e-"));
    copyFileSync(EXECUTABLE, join(workDir, "paygate"));
    receiver = await startWebhookReceiver();
    child = spawn("./paygate", ["sandbox", "--json", "--port", "0", "--webhook", receiver.url], {
      cwd: workDir,
      env: { PATH: "/usr/bin:/bin", TMPDIR: workDir },
    });
    child.stderr.on("data", (d) => (stderr += d));
    const firstLine = await new Promise<string>((resolvePromise, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`no JSON line: ${stderr}`)), 20_000);
      child.stdout.on("data", (d) => {
        out += d;
        if (out.includes("\n")) {
          clearTimeout(timer);
          resolvePromise(out.slice(0, out.indexOf("\n")));
        }
      });
      child.on("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    sandbox = JSON.parse(firstLine) as Sandbox;
  });

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    await receiver?.close();
    rmSync(workDir, { recursive: true, force: true });
  });

  const call = async (path: string, key: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(sandbox.base_url + path, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": `e2e-${Math.random()}` },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: await res.json() };
  };
  const tokenize = async (number: string) =>
    (await call("/v1/tokens", sandbox.keys.publishable, { card: { number, ...futureExpiry(), cvc: "123" } })).body.token as string;

  it("answers readiness and liveness and prints a complete JSON line", async () => {
    expect((await fetch(`${sandbox.base_url}/health/ready`)).status).toBe(200);
    const { version, config } = JSON.parse(readFileSync(resolve(__dirname, "../../package.json"), "utf8")) as { version: string; config: { executableNode: string } };
    expect(await (await fetch(`${sandbox.base_url}/health`)).json()).toEqual({ status: "ok", service: "paygate", version, node: `v${config.executableNode}` });
    expect(sandbox.webhook.secret).toMatch(/^whsec_/);
    expect(sandbox.data_dir.startsWith(workDir)).toBe(true);
  });

  it("tokenizes each test card and answers each with its outcome", async () => {
    for (const [outcome, number] of Object.entries(CARDS)) {
      const token = await tokenize(number);
      expect(token).toMatch(/^tok_test_/);
      const sale = await call("/v1/payments/sale", sandbox.keys.secret, { amount: 1500, currency: "usd", gateway_token: token });
      if (outcome === "approved") {
        expect(sale.status).toBe(201);
        expect(sale.body.connector_account_short_id).toBe(sandbox.connector_account.short_id);
      } else {
        expect(sale.status).toBe(502);
        expect(sale.body.error).toMatchObject({ type: "connector_error", code: "connector_error", connector_code: outcome });
      }
    }
  });

  it("runs the full lifecycle and delivers signed webhooks for each step", async () => {
    const token = await tokenize(CARDS.approved as string);
    const authorized = await call("/v1/payments/authorize", sandbox.keys.secret, { amount: 5000, currency: "usd", gateway_token: token, capture_method: "manual" });
    expect(authorized.body.status).toBe("authorized");
    const id = authorized.body.id;
    expect((await call("/v1/payments/capture", sandbox.keys.secret, { payment_id: id, amount: 4000 })).body.status).toBe("succeeded");
    expect((await call("/v1/payments/refund", sandbox.keys.secret, { payment_id: id, amount: 1000 })).body.status).toBe("partially_refunded");
    expect((await call("/v1/payments/refund", sandbox.keys.secret, { payment_id: id })).body.status).toBe("refunded");
    const toVoid = await call("/v1/payments/authorize", sandbox.keys.secret, { amount: 700, currency: "usd", gateway_token: token, capture_method: "manual" });
    expect((await call("/v1/payments/void", sandbox.keys.secret, { payment_id: toVoid.body.id })).body.status).toBe("voided");

    const forPayment = (paymentId: string) => receiver.received.filter((w) => JSON.parse(w.raw).data.id === paymentId);
    await receiver.waitUntil(() => forPayment(id).length >= 4 && forPayment(toVoid.body.id).length >= 2, 20_000);
    const types = forPayment(id).map((w) => JSON.parse(w.raw).type);
    expect(types.sort()).toEqual(["payment.authorized", "payment.captured", "payment.refunded", "payment.refunded"]);
    expect(forPayment(toVoid.body.id).map((w) => JSON.parse(w.raw).type).sort()).toEqual(["payment.authorized", "payment.voided"]);
    for (const webhook of receiver.received) {
      expect(verifySignature(sandbox.webhook.secret, webhook.headers["x-service-signature"] as string, webhook.raw)).toBe(true);
      expect(verifySignature(sandbox.webhook.secret, webhook.headers["x-service-signature"] as string, webhook.raw.replace(`"object":"event"`, `"object":"Event"`))).toBe(false);
      expect(webhook.headers["x-service-event-id"]).toBe(JSON.parse(webhook.raw).id);
    }
  });

  it("shuts down cleanly on Ctrl-C and removes its temporary data dir", async () => {
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    child.kill("SIGINT");
    expect(await exited).toBe(0);
    expect(existsSync(sandbox.data_dir)).toBe(false);
  });
});
