import { spawn } from "node:child_process";
import { expect, it } from "vitest";
import { BUNDLE } from "../support/cli";

/** Starts `paygate sandbox --port 0` (the bundle) and reads its banner up to the dashboard sign-in line. */
function sandboxBanner(): Promise<{ banner: string; stop(): Promise<void> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BUNDLE, "sandbox", "--port", "0"], { env: { PATH: process.env.PATH, HOME: process.env.HOME } });
    const exited = new Promise<void>((r) => child.on("exit", () => r()));
    let out = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`no dashboard line: ${out}`));
    }, 20_000);
    child.stdout.on("data", (d) => {
      out += d;
      if (/dashboard sign-in .*\n/.test(out)) {
        clearTimeout(timer);
        resolve({ banner: out, stop: () => (child.kill("SIGINT"), exited) });
      }
    });
  });
}

it("paygate sandbox prints the dashboard URL and a one-time sign-in link that carries a token, not the key", async () => {
  const { banner, stop } = await sandboxBanner();
  try {
    const secret = /secret key\s+(sk_test_\w+)/.exec(banner)?.[1] as string;
    const link = /dashboard sign-in\s+(\S+)/.exec(banner)?.[1] as string;
    expect(banner).toMatch(/dashboard\s+http:\/\/127\.0\.0\.1:\d+\/dashboard\n/);
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/dashboard\/sign-in\/link\?token=[\w-]{40,}$/);
    expect(link).not.toContain(secret);
    const first = await fetch(link, { redirect: "manual" });
    expect(first.status).toBe(303);
    const cookie = first.headers.get("set-cookie")?.split(";")[0] as string;
    const overview = await fetch(new URL("/dashboard", link), { headers: { cookie } });
    expect(overview.status).toBe(200);
    expect(await overview.text()).toContain("Overview");
    expect((await fetch(link, { redirect: "manual" })).status).toBe(401);
  } finally {
    await stop();
  }
});
