import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootServer, type TestServer } from "../support/harness";
import { auth } from "../support/seed";
import { CARDS, paymentsClient, seedSandboxMerchant } from "../support/payments";
import { startWebhookReceiver, type WebhookReceiver } from "../fakes/webhook-receiver";
import { browserAvailable, openBrowser, screenshots, type Browser } from "./browser";

const run = browserAvailable();

describe.skipIf(!run)("the dashboard in real headless Chromium", () => {
  let server: TestServer;
  let browser: Browser;
  let receiver: WebhookReceiver;
  let shop: Awaited<ReturnType<typeof seedSandboxMerchant>>;

  beforeAll(async () => {
    // One retry a second apart: an event to a failing endpoint is dead within seconds.
    server = await bootServer({ env: { PAYGATE_WEBHOOK_RETRY_SCHEDULE: "1s" } });
    shop = await seedSandboxMerchant(server, "Browser Shop");
    receiver = await startWebhookReceiver({ status: 500 });
    browser = await openBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await server?.stop();
  });

  const sale = async (amount: number, card: string) => {
    const client = paymentsClient(server, shop.secret);
    const body = await (await client.sale({ amount, gateway_token: await client.token(card), description: "browser test" })).json();
    return (body.id ?? body.error.payment_id) as string;
  };

  /** Signs in through the form unless the browser already holds a session (tests can run alone). */
  const ensureSignedIn = async () => {
    const { page } = browser;
    await page.goto(`${server.url}/dashboard`);
    if (!page.url().includes("/sign-in")) return;
    await page.getByLabel("Secret API key").fill(shop.secret);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${server.url}/dashboard`);
  };

  it("signs in, finds a payment by last4, refunds part of it and sees the refund in the timeline", async () => {
    const { page } = browser;
    const wanted = await sale(4200, CARDS.approved);
    await sale(1500, CARDS.generic_decline);
    await page.goto(`${server.url}/dashboard`);
    await expect.poll(() => page.url()).toContain("/dashboard/sign-in");
    await screenshots(page, "sign-in");
    await page.getByLabel("Secret API key").fill(shop.secret);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${server.url}/dashboard`);
    await screenshots(page, "overview");

    await page.getByRole("link", { name: "Payments" }).first().click();
    await page.getByLabel("Card last 4").fill("4242");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/last4=4242/);
    const rows = page.locator("tbody tr");
    await expect.poll(() => rows.count()).toBe(1);
    await screenshots(page, "payments");
    await page.getByRole("link", { name: wanted }).click();
    await page.waitForURL(`${server.url}/dashboard/payments/${wanted}`);

    await page.getByLabel(/Refund amount/).fill("10.00");
    await page.getByLabel("Reason (optional)").fill("customer asked");
    await page.getByRole("button", { name: "Refund" }).click();
    await page.waitForURL(/done=refunded/);
    await expect.poll(() => page.getByRole("list", { name: "Events" }).innerText()).toContain("payment.refunded");
    expect(await page.locator("dl.facts").innerText()).toContain("Refunded\n10.00 USD");
    await screenshots(page, "payment-detail");
    const payment = await (await paymentsClient(server, shop.secret).get(wanted)).json();
    expect(payment.amount_refunded).toBe(1000);
    expect(browser.problems).toEqual([]);
  });

  it("replays a dead-lettered event from the DLQ page and it reaches the receiver, without a reload", async () => {
    const { page } = browser;
    const created = await server.request("/v1/webhook_endpoints", { method: "POST", headers: auth(shop.secret), json: { url: receiver.url, event_types: ["payment.captured"] } });
    expect(created.status).toBe(201);
    const paymentId = await sale(3100, CARDS.approved);
    // Two failed attempts (the first and the one retry), then the delivery is dead.
    await expect
      .poll(async () => (await server.app.db.selectFrom("webhook_deliveries").select("status").where("status", "=", "dead").execute()).length, { timeout: 20_000, interval: 250 })
      .toBe(1);
    receiver.answer(200);
    const before = receiver.received.length;
    await ensureSignedIn();

    await page.goto(`${server.url}/dashboard/webhooks/dead`);
    await screenshots(page, "dead-letters");
    const row = page.locator("tbody tr", { hasText: "payment.captured" });
    await expect.poll(() => row.count()).toBe(1);
    // A marker that a reload would wipe: the outcome must come in place.
    await page.evaluate(() => ((globalThis as unknown as { stayed: boolean }).stayed = true));
    await row.getByRole("button", { name: /Replay/ }).click();
    await expect.poll(() => page.locator(`tbody tr`, { hasText: "payment.captured" }).innerText(), { timeout: 20_000, interval: 250 }).toContain("delivered");
    expect(await page.evaluate(() => (globalThis as unknown as { stayed?: boolean }).stayed)).toBe(true);
    const got = await receiver.waitUntil((r) => r.length > before);
    expect(JSON.parse(got.at(-1)?.raw ?? "{}").data.id).toBe(paymentId);
    await screenshots(page, "dead-letters-replayed");
    expect(browser.problems).toEqual([]);
  });

  it("switches an admin session to another merchant by keyboard and shows that merchant's connector accounts", async () => {
    const { page } = browser;
    const target = await seedSandboxMerchant(server, "Browser Other");
    await page.goto(`${server.url}/dashboard`);
    if (!page.url().includes("/sign-in")) {
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.waitForURL(/\/sign-in/);
    }
    await page.getByLabel("Secret API key").fill(shop.admin);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(`${server.url}/dashboard`);
    await page.goto(`${server.url}/dashboard/accounts`);
    expect(await page.locator("main").innerText()).toContain(shop.accountShortId);

    const select = page.getByLabel("Merchant");
    await select.focus();
    await select.selectOption(target.merchant.id);
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.waitForURL(`${server.url}/dashboard/accounts`);
    await expect.poll(() => page.locator("main").innerText()).toContain(target.accountShortId);
    expect(await page.locator("main").innerText()).not.toContain(shop.accountShortId);
    expect(await select.inputValue()).toBe(target.merchant.id);
    await screenshots(page, "accounts-other-merchant");

    await page.getByRole("link", { name: "Payments" }).first().click();
    await expect.poll(() => page.getByRole("note").innerText()).toContain("admin key's own merchant");
    await screenshots(page, "payments-admin-note");
    // Back to the admin key's own merchant, then out: the next tests sign in with the merchant key.
    await select.selectOption(shop.merchant.id);
    await page.getByRole("button", { name: "Switch" }).click();
    await page.waitForURL(`${server.url}/dashboard/payments`);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/sign-in/);
    expect(browser.problems).toEqual([]);
  });

  it("shows the other pages without console errors or CSP violations", async () => {
    const { page } = browser;
    await ensureSignedIn();
    for (const [name, path] of [
      ["webhooks", "/dashboard/webhooks"],
      ["deliveries", "/dashboard/webhooks/deliveries"],
      ["keys", "/dashboard/keys"],
      ["accounts", "/dashboard/accounts"],
    ] as const) {
      const res = await page.goto(`${server.url}${path}`);
      expect(res?.status(), path).toBe(200);
      await screenshots(page, name);
    }
    await page.goto(`${server.url}/dashboard`);
    await screenshots(page, "overview-with-data");
    expect(browser.problems).toEqual([]);
  });
});
