import { execFile } from "node:child_process";
import { join, relative, sep } from "node:path";
import { promisify } from "node:util";
import type { Difference } from "../support/differences.js";

const run = promisify(execFile);
const tsc = join(import.meta.dirname, "..", "..", "..", "node_modules", ".bin", "tsc");

async function compile(config: string): Promise<string> {
  try {
    await run(tsc, ["-p", join(import.meta.dirname, config), "--pretty", "false"], {
      cwd: import.meta.dirname,
    });
    return "";
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string };
    return `${failure.stdout ?? ""}${failure.stderr ?? ""}`;
  }
}

/**
 * Compiles the corpus against the real Agent SDK's declarations (emitting what the harness runs;
 * an error there is a program that is not a genuine Agent SDK program, thrown) and, unchanged,
 * against @forkloop/sdk's published declarations: each error there is a difference of its
 * program (`compile.forkloop TS2305`).
 */
export async function compilePrograms(): Promise<Map<string, Difference[]>> {
  const own = await compile("tsconfig.agent-sdk.json");
  if (own !== "") throw new Error(`the corpus does not compile against the real Agent SDK:\n${own}`);
  const differences = new Map<string, Difference[]>();
  for (const line of (await compile("tsconfig.forkloop.json")).split("\n")) {
    const diagnostic = /^(.*?)\(\d+,\d+\): error (TS\d+): (.*)$/.exec(line);
    if (!diagnostic) continue;
    const file = relative(
      join(import.meta.dirname, "programs"),
      join(import.meta.dirname, diagnostic[1] ?? ""),
    );
    const program = file.split(sep)[0] ?? file;
    const list = differences.get(program) ?? [];
    list.push({ code: `compile.forkloop ${diagnostic[2]}`, detail: diagnostic[3] ?? "" });
    differences.set(program, list);
  }
  return differences;
}
