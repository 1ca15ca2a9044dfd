import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { PageAssets } from "./html-document.js";

/**
 * The built page script and style. From dist/ they sit beside this module; from src/ (tests run
 * the source) they are read from the package's dist/, so build the package first.
 */
export async function loadPageAssets(): Promise<PageAssets> {
  const candidates = [new URL("./page/", import.meta.url), new URL("../dist/page/", import.meta.url)];
  for (const base of candidates) {
    try {
      const [script, style] = await Promise.all([
        readFile(new URL("viewer.js", base), "utf8"),
        readFile(new URL("viewer.css", base), "utf8"),
      ]);
      return { script, style };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  throw new Error(
    `the report page script is not built (looked in ${candidates.map((url) => fileURLToPath(url)).join(" and ")}): run \`npx turbo run build --filter=@forkloop/report\``,
  );
}
