import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startCliServer, type CliServer } from "../support/cli";
import { freshDataDir } from "../support/harness";

/** A self-signed certificate for 127.0.0.1 and its key, and a second, unrelated key. */
function makeCertificate(dir: string): { cert: string; key: string; otherKey: string } {
  const files = { cert: join(dir, "cert.pem"), key: join(dir, "key.pem"), otherKey: join(dir, "other-key.pem") };
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  execFileSync("openssl", ["req", "-x509", ...ec, "-keyout", files.key, "-out", files.cert, "-days", "2", "-subj", "/CN=paygate-test", "-addext", "subjectAltName=IP:127.0.0.1"], { stdio: "ignore" });
  execFileSync("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", files.otherKey], { stdio: "ignore" });
  return files;
}

function getOverHttps(url: string, ca: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { ca }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

function getOverHttp(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

describe("serve --tls-cert/--tls-key", () => {
  const dir = freshDataDir();
  const files = makeCertificate(dir);
  const ca = readFileSync(files.cert, "utf8");
  let server: CliServer;
  beforeAll(async () => {
    server = await startCliServer(["serve", "--port", "0", "--data", join(dir, "data"), "--tls-cert", files.cert, "--tls-key", files.key]);
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves HTTPS to a client that trusts the certificate, and prints an https:// URL", async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const res = await getOverHttps(`${server.url}/health`, ca);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ status: "ok" });
  });

  it("refuses a client that does not trust it, and plain HTTP on the same port", async () => {
    await expect(getOverHttps(`${server.url}/health`, "")).rejects.toThrow();
    await expect(getOverHttp(`${server.url.replace("https:", "http:")}/health`)).rejects.toThrow();
  });

  it("takes the files from PAYGATE_TLS_CERT and PAYGATE_TLS_KEY", async () => {
    const fromEnv = await startCliServer(["serve", "--port", "0", "--data", join(dir, "env-data")], { env: { PAYGATE_TLS_CERT: files.cert, PAYGATE_TLS_KEY: files.key } });
    try {
      expect((await getOverHttps(`${fromEnv.url}/health`, ca)).status).toBe(200);
    } finally {
      await fromEnv.stop();
    }
  });

  it("stops with one line naming the setting for a missing, wrong or mismatched file, before creating anything", async () => {
    const data = join(dir, "never-created");
    const serve = (args: string[], env: Record<string, string> = {}) => runCli(["serve", "--port", "0", "--data", data, ...args], { env });
    const cases: Array<[string[], Record<string, string>, RegExp]> = [
      [["--tls-cert", join(dir, "missing.pem"), "--tls-key", files.key], {}, /^paygate: invalid --tls-cert: cannot read .*missing\.pem \(ENOENT\)\n$/],
      [["--tls-cert", files.key, "--tls-key", files.key], {}, /^paygate: invalid --tls-cert: .*key\.pem holds no readable X\.509 certificate\n$/],
      [["--tls-cert", files.cert, "--tls-key", files.otherKey], {}, /^paygate: invalid --tls-key: .*other-key\.pem is not the private key of the certificate in .*cert\.pem \(--tls-cert\)\n$/],
      [["--tls-cert", files.cert], {}, /^paygate: invalid --tls-cert: needs a private key too/],
      [[], { PAYGATE_TLS_KEY: files.key }, /^paygate: invalid PAYGATE_TLS_KEY: needs a certificate too/],
      [[], { PAYGATE_TLS_CERT: files.cert, PAYGATE_TLS_KEY: join(dir, "nope.pem") }, /^paygate: invalid PAYGATE_TLS_KEY: cannot read .*nope\.pem \(ENOENT\)\n$/],
    ];
    for (const [args, env, message] of cases) {
      const res = await serve(args, env);
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr).toMatch(message);
    }
    expect(existsSync(data)).toBe(false);
  });
});
