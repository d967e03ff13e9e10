import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const SCREENSHOTS = join(process.cwd(), "test-output", "dashboard");

/**
 * Whether the browser tests can run: without Debian's chromium they are skipped with a
 * loud line, unless PAYGATE_REQUIRE_BROWSER=1 (CI), where a missing browser fails.
 */
export function browserAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env.PAYGATE_REQUIRE_BROWSER === "1") throw new Error(`${CHROMIUM} is missing and PAYGATE_REQUIRE_BROWSER=1: install it with apt-get install -y chromium`);
  console.warn(`\n!!! SKIPPING the dashboard's browser tests: ${CHROMIUM} is missing (apt-get install -y chromium) !!!\n`);
  return false;
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Console errors, page errors and CSP violations seen so far. */
  problems: string[];
  close(): Promise<void>;
}

/** Real headless Chromium with a fresh profile; every console error is collected. */
export async function openBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "paygate-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error" || /Content Security Policy/i.test(message.text())) problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(String(error)));
  page.on("dialog", (dialog) => void dialog.accept());
  return {
    context,
    page,
    problems,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Saves the page at 1280 px and 390 px wide as `<name>-1280.png` and `<name>-390.png`. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await page.screenshot({ path: join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}
