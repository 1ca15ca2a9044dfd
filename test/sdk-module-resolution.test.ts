import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensurePeersInstalled } from "./conformance/support/peers.js";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");
let project: string;
let typescript5: string;

// A project that installed @forkloop/sdk (and forkloop), compiled by TypeScript 5 under each
// moduleResolution a user may have: under "node" (node10) TypeScript reads only the top-level
// "types" — without it the package had no types at all there (R-K4). Needs the packages built.
beforeAll(async () => {
  // TypeScript 5 (installed with the conformance peers): TypeScript 7 no longer has "node".
  typescript5 = ensurePeersInstalled().typescript5Tsc;
  project = await mkdtemp(join(tmpdir(), "forkloop-resolution-"));
  await mkdir(join(project, "node_modules", "@forkloop"), { recursive: true });
  await symlink(join(root, "packages", "sdk"), join(project, "node_modules", "@forkloop", "sdk"));
  await symlink(join(root, "apps", "forkloop"), join(project, "node_modules", "forkloop"));
  await symlink(join(root, "node_modules", "@types"), join(project, "node_modules", "@types"));
  await writeFile(
    join(project, "program.ts"),
    [
      'import { query, type Options, type SDKMessage } from "@forkloop/sdk";',
      'import { query as viaForkloop } from "forkloop";',
      'const options: Options = { maxTurns: 1, allowedTools: ["Read"] };',
      "export async function first(): Promise<SDKMessage | undefined> {",
      '  for await (const message of query({ prompt: "hi", options })) return message;',
      "  return undefined;",
      "}",
      "export const same = viaForkloop === query;",
      "",
    ].join("\n"),
  );
});

afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

/** "node" only exists in TypeScript 5 (a JavaScript compiler, slower); the rest run on the repo's 7. */
const setups = [
  { moduleResolution: "node", module: "commonjs", type: "commonjs", typescript: 5 },
  { moduleResolution: "node16", module: "node16", type: "module", typescript: 7 },
  { moduleResolution: "nodenext", module: "nodenext", type: "module", typescript: 7 },
  { moduleResolution: "bundler", module: "esnext", type: "module", typescript: 7 },
] as const;
const TYPESCRIPT_7 = join(root, "node_modules", "typescript", "bin", "tsc");

describe("R-K2: TypeScript finds @forkloop/sdk's types under every moduleResolution", () => {
  it.each(setups)(
    "R-K2: moduleResolution $moduleResolution (module $module, TypeScript $typescript)",
    async (setup) => {
      const tsc = setup.typescript === 5 ? typescript5 : TYPESCRIPT_7;
      const dir = join(project, setup.moduleResolution);
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "package.json"), JSON.stringify({ type: setup.type }));
      await copyFile(join(project, "program.ts"), join(dir, "program.ts"));
      await writeFile(
        join(dir, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            module: setup.module,
            moduleResolution: setup.moduleResolution,
            target: "ES2022",
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: ["node"],
          },
          files: ["program.ts"],
        }),
      );
      const output = await run(
        process.execPath,
        [tsc, "-p", join(dir, "tsconfig.json"), "--pretty", "false"],
        {
          cwd: dir,
        },
      ).then(
        () => "",
        (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ""}${error.stderr ?? ""}`,
      );
      expect(output).toBe("");
    },
    180_000,
  );
});
