/**
 * Builds the report page's script: src/page/main.ts and the parts of Chart.js it uses, as one
 * minified IIFE (dist/page/viewer.js), and copies its stylesheet. The report generator inlines
 * both into every page, so a report needs no network to be viewed.
 */
import { copyFile, mkdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
await mkdir(join(root, "dist", "page"), { recursive: true });
await build({
  input: join(root, "src", "page", "main.ts"),
  platform: "browser",
  output: { file: join(root, "dist", "page", "viewer.js"), format: "iife", minify: true },
  logLevel: "warn",
});
await copyFile(join(root, "src", "page", "viewer.css"), join(root, "dist", "page", "viewer.css"));
