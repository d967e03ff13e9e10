import { spawn } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BUNDLE, runCli } from "../support/cli";
import { freshDataDir } from "../support/harness";
import { CARDS } from "../support/payments";
import { futureExpiry } from "../support/expiry";

interface SandboxRun {
  json: Record<string, any>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  stdout(): string;
}

/** Starts `paygate sandbox --json …` and reads its first stdout line. */
function startSandbox(args: string[]): Promise<SandboxRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BUNDLE, "sandbox", "--json", ...args], { env: { PATH: process.env.PATH, HOME: process.env.HOME } });
    let out = "";
    let err = "";
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no JSON line: ${out} ${err}`));
    }, 15_000);
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      const newline = out.indexOf("\n");
      if (newline >= 0 && timer) {
        clearTimeout(timer);
        resolve({
          json: JSON.parse(out.slice(0, newline)),
          stdout: () => out,
          stop(signal = "SIGINT") {
            if (child.exitCode === null) child.kill(signal);
            return exited;
          },
        });
      }
    });
    child.on("exit", (code) => reject(new Error(`sandbox exited ${code}: ${err}`)));
  });
}

/** Response bodies are asserted on, not typed. */
const jsonOf = (res: Response): Promise<any> => res.json();

const post = (url: string, key: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { authorization: `Bearer ${key}`, "idempotency-key": `${Math.random()}`, "content-type": "application/json" }, body: JSON.stringify(body) });

describe("paygate sandbox", () => {
  it("prints one JSON line first, with working keys and account, and removes its temporary data dir on Ctrl-C", async () => {
    const sandbox = await startSandbox(["--port", "0"]);
    const { json } = sandbox;
    expect(json).toEqual({
      base_url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      merchant: { id: expect.any(String), short_id: expect.stringMatching(/^mrc_/) },
      keys: { secret: expect.stringMatching(/^sk_test_/), publishable: expect.stringMatching(/^pk_test_/), admin: expect.stringMatching(/^sk_test_/) },
      connector_account: { id: expect.any(String), short_id: expect.stringMatching(/^ca_/) },
      data_dir: expect.any(String),
    });
    expect(statSync(join(json.data_dir, "sandbox.json")).mode & 0o777).toBe(0o600);
    for (const [outcome, number] of Object.entries(CARDS)) {
      const token = await jsonOf(await post(`${json.base_url}/v1/tokens`, json.keys.publishable, { card: { number, ...futureExpiry(), cvc: "123" } }));
      const sale = await post(`${json.base_url}/v1/payments/sale`, json.keys.secret, { amount: 1000, currency: "usd", gateway_token: token.token });
      if (outcome === "approved") {
        expect(sale.status).toBe(201);
        expect((await jsonOf(sale)).connector_account_short_id).toBe(json.connector_account.short_id);
      } else {
        expect(sale.status).toBe(502);
        expect((await jsonOf(sale)).error.connector_code).toBe(outcome);
      }
    }
    const merchants = await fetch(`${json.base_url}/admin/merchants`, { headers: { authorization: `Bearer ${json.keys.admin}` } });
    expect(merchants.status).toBe(200);
    expect(await sandbox.stop("SIGINT")).toBe(0);
    expect(existsSync(json.data_dir)).toBe(false);
  });

  it("prints a curl line that works as pasted", async () => {
    const data = freshDataDir();
    const result = await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, [BUNDLE, "sandbox", "--port", "0", "--data", data], { env: { PATH: process.env.PATH, HOME: process.env.HOME } });
      let out = "";
      child.stdout.on("data", (d) => {
        out += d;
        if (out.includes("Press Ctrl-C")) {
          const curl = out.split("\n").find((l) => l.includes("/v1/payments/sale"))?.trim() ?? "";
          const shell = spawn("bash", ["-c", curl]);
          let answer = "";
          shell.stdout.on("data", (x) => (answer += x));
          shell.on("exit", () => {
            child.kill("SIGTERM");
            resolve(answer);
          });
        }
      });
    });
    expect(JSON.parse(result)).toMatchObject({ object: "payment", status: "succeeded", amount: 1000 });
  });

  it("reuses a --data dir: same keys, seeded once", async () => {
    const data = freshDataDir();
    const first = await startSandbox(["--port", "0", "--data", data]);
    await first.stop();
    const second = await startSandbox(["--port", "0", "--data", data]);
    try {
      expect(second.json.keys).toEqual(first.json.keys);
      expect(second.json.merchant).toEqual(first.json.merchant);
      const merchants = await jsonOf(await fetch(`${second.json.base_url}/admin/merchants`, { headers: { authorization: `Bearer ${second.json.keys.admin}` } }));
      expect(merchants.data).toHaveLength(1);
    } finally {
      await second.stop();
    }
    expect(existsSync(join(data, "paygate.db"))).toBe(true);
    expect(readFileSync(join(data, "sandbox.json"), "utf8")).toContain(first.json.keys.secret);
  });

  it("exits non-zero with a clear message when the port is taken", async () => {
    const first = await startSandbox(["--port", "0"]);
    try {
      const port = new URL(first.json.base_url).port;
      const second = await runCli(["sandbox", "--port", port]);
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`port ${port}`);
      expect(second.stderr).toContain("--port 0");
    } finally {
      await first.stop();
    }
  });
});
