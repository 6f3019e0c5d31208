/**
 * Debian's Chromium (the `chromium` package, never a downloaded browser) driven by
 * playwright-core, headless, with a fresh profile per launch and nothing reaching the network
 * by itself. Missing browser: the test fails with how to install it, it is not skipped.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
/** Where the page tests keep their screenshots (CI keeps .ci/out/). */
export const SCREENSHOTS = new URL("../../.ci/out/", import.meta.url).pathname;

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export type TestBrowser = { context: BrowserContext; close(): Promise<void> };

export type LaunchOptions = {
  colorScheme?: "light" | "dark";
  viewport?: { width: number; height: number };
  /** Answers HTTP basic-auth challenges with these, as a person typing them would. */
  httpCredentials?: { username: string; password: string };
};

export async function launchChromium(options: LaunchOptions = {}): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's package (apt-get update && apt-get install -y chromium; .ci/run does it)`);
  }
  const profile = mkdtempSync(join(tmpdir(), "ui-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
    colorScheme: options.colorScheme ?? "light",
    viewport: options.viewport ?? { width: 1280, height: 800 },
    ...(options.httpCredentials ? { httpCredentials: options.httpCredentials } : {}),
  });
  return {
    context,
    close: async () => {
      await context.close().catch(() => undefined);
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The web page built into dist/ui/public as the registry serves it (build-page.mjs rewrites a
 * file only when its bytes change, so test files building at once agree), and the folder for
 * screenshots made.
 */
export function buildWebPage(): void {
  mkdirSync(SCREENSHOTS, { recursive: true });
  execFileSync(process.execPath, ["src/ui/build-page.mjs"], { stdio: "pipe" });
}
