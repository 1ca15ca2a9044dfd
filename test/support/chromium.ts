/**
 * Real headless Chromium for the report tests: Debian's /usr/bin/chromium (`.ci/run` installs it)
 * driven by playwright-core, which downloads no browser. The flags keep Chromium off this
 * machine's closed network; each launch gets a fresh profile directory.
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM_PATH = process.env.FORKLOOP_CHROMIUM ?? "/usr/bin/chromium";

/**
 * Where the report tests keep their screenshots (CI artifacts): a fixed folder under the temp
 * directory, outside the fixtures the tests delete, overwritten by each run.
 */
export const SCREENSHOTS_DIR = join(tmpdir(), "forkloop-report-screenshots");

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `${CHROMIUM_PATH} is missing: install Debian's chromium (\`apt-get install -y chromium\`, as .ci/run does)`,
    );
  }
  const profile = await mkdtemp(join(tmpdir(), "forkloop-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

export interface OpenedReport {
  readonly page: Page;
  /** Console errors, uncaught exceptions and CSP violations seen so far. */
  readonly errors: string[];
  /** Every request the page made that was not its own file (a self-contained page makes none). */
  readonly network: string[];
}

/**
 * Opens a report file (at `hash`, e.g. `#item=…`, as a copied link would) and waits until it says
 * it is drawn (`body[data-ready]`).
 */
export async function openReport(browser: Browser, path: string, hash = ""): Promise<OpenedReport> {
  const page = await browser.context.newPage();
  const errors: string[] = [];
  const network: string[] = [];
  const url = pathToFileURL(path).href;
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(`uncaught: ${error.message}`));
  await page.route("**/*", (route) => {
    const requested = route.request().url();
    if (requested === url) return route.continue();
    network.push(requested);
    return route.abort();
  });
  await page.goto(url + hash);
  await page.waitForSelector("body[data-ready=true]", { timeout: 15_000 });
  return { page, errors, network };
}

/**
 * Saves a full-page screenshot as SCREENSHOTS_DIR/`name`.png and measures it with Chromium's own PNG decoder: how
 * many distinct colours (quantised) and what share of the pixels are not the background white.
 */
export async function screenshot(
  browser: Browser,
  page: Page,
  name: string,
): Promise<{ path: string; colours: number; inked: number }> {
  const png = await page.screenshot({ fullPage: true });
  await mkdir(SCREENSHOTS_DIR, { recursive: true });
  const path = join(SCREENSHOTS_DIR, `${name}.png`);
  await writeFile(path, png);
  const probe = await browser.context.newPage();
  try {
    const measured = await probe.evaluate(async (base64) => {
      const image = new Image();
      image.src = `data:image/png;base64,${base64}`;
      await image.decode();
      const canvas = new OffscreenCanvas(image.width, image.height);
      const ctx = canvas.getContext("2d")!;
      ctx.drawImage(image, 0, 0);
      const { data } = ctx.getImageData(0, 0, image.width, image.height);
      const colours = new Set<number>();
      let inked = 0;
      for (let index = 0; index < data.length; index += 4 * 7) {
        const [r, g, b] = [data[index]!, data[index + 1]!, data[index + 2]!];
        colours.add(((r >> 4) << 8) | ((g >> 4) << 4) | (b >> 4));
        if (r < 235 || g < 235 || b < 235) inked++;
      }
      return { colours: colours.size, inked: inked / (data.length / (4 * 7)) };
    }, png.toString("base64"));
    return { path, ...measured };
  } finally {
    await probe.close();
  }
}
