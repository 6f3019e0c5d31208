/**
 * Debian's Chromium (the `chromium` package, never a downloaded browser) driven by
 * playwright-core, headless, with a fresh profile per launch and nothing reaching the network
 * by itself. Missing browser: the test fails with how to install it, it is not skipped.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

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
