/**
 * Debian's Chromium driven by playwright-core (no browser download): the approver web app's
 * acceptance tests open the gateway `gatehouse dev` serves. Screenshots go to
 * e2e/test-output/screenshots (gitignored; written by each run).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";

/** Where Debian installs Chromium (`apt-get install chromium`; `npm run setup` does it). */
export const CHROMIUM = process.env.GATEHOUSE_CHROMIUM ?? "/usr/bin/chromium";

/** Directory the screenshots are written to. */
export const SCREENSHOTS = join(import.meta.dirname, "..", "test-output", "screenshots");

/** Launches headless Chromium. @throws naming the fix when it is not installed. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM}: run npm run setup (apt-get install chromium) or set GATEHOUSE_CHROMIUM`,
    );
  }
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu"],
  });
}

/** Opens the web app signed in with `token`, at `route` (a hash route such as "/" or "/ws/w1/log"). */
export async function openApp(
  browser: Browser,
  base: string,
  token: string,
  route = "/",
  viewport = { width: 1280, height: 800 },
): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  await page.goto(`${base}/#token=${encodeURIComponent(token)}`);
  await page.waitForSelector('[data-testid="me-name"]');
  if (route !== "/")
    await page.evaluate((r) => {
      window.location.hash = `#${r}`;
    }, route);
  return page;
}

/** Whether the page scrolls sideways (unreadable on a phone). */
export async function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
}
