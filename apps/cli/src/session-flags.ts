import { resolve } from "node:path";
import { checkProjectDir, type ProjectState, projectState } from "@forkloop/sdk";
import { z } from "zod";
import { type ParsedCommand, parseCommand } from "./flags.js";

const schema = z.object({
  help: z.boolean().optional(),
  cwd: z.string().min(1, "give a directory, e.g. --cwd ../project").optional(),
  "state-dir": z.string().min(1, "give a directory, e.g. --state-dir ~/forkloop-state").optional(),
  json: z.boolean().optional(),
});

/** The flags `sessions` and `replay` share: `--cwd DIR`, `--state-dir DIR`, `--json`, `--help`. */
export function parseSessionFlags(
  command: "sessions" | "replay",
  usage: string,
  argv: readonly string[],
): ParsedCommand<z.infer<typeof schema>> {
  return parseCommand(
    {
      command,
      usage,
      schema,
      options: {
        help: { type: "boolean", short: "h" },
        cwd: { type: "string" },
        "state-dir": { type: "string" },
        json: { type: "boolean" },
      },
    },
    argv,
  );
}

/** The project state those flags name (state-dirs.ts); `--cwd` must exist. */
export async function sessionFlagsState(
  flags: z.infer<typeof schema>,
  context: { readonly cwd: string; readonly env: NodeJS.ProcessEnv },
): Promise<ProjectState> {
  const cwd = await checkProjectDir(resolve(context.cwd, flags.cwd ?? "."));
  return projectState({
    cwd,
    env: context.env,
    ...(flags["state-dir"] === undefined ? {} : { stateDir: flags["state-dir"] }),
  });
}
