import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli";
import { bootServer, type TestServer } from "../support/harness";
import { auth, seedMerchant, type SeededMerchant } from "../support/seed";

/** A key name is chosen by whoever holds a key; the operator's terminal shows it. */
describe("CLI tables and hostile names", () => {
  let server: TestServer;
  let m: SeededMerchant;
  beforeAll(async () => {
    server = await bootServer();
    m = await seedMerchant(server);
  });
  afterAll(() => server.stop());

  it("never write a control character to the terminal: ESC, CR and LF are shown escaped", async () => {
    const name = "\u001b]0;PWNED\u0007\u001b[2J\u001b[31mFAKE\r\nkey_admin  root  secret  live  admin";
    expect((await server.request("/v1/api-keys", { method: "POST", headers: auth(m.secret), json: { name } })).status).toBe(201);
    const listed = await runCli(["keys", "list", "--merchant", m.merchant.short_id, "--data", server.dataDir]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
    expect(listed.stdout).toContain("\\u001b]0;PWNED\\u0007");
    expect(listed.stdout.split("\n").filter((line) => line.startsWith("key_admin"))).toEqual([]);
    const json = await runCli(["keys", "list", "--merchant", m.merchant.short_id, "--data", server.dataDir, "--json"]);
    expect(JSON.parse(json.stdout).data.map((k: { name: string }) => k.name)).toContain(name);
  });
});
