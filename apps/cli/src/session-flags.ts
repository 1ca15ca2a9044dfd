import { z } from "zod";
import { type ParsedCommand, parseCommand } from "./flags.js";

const schema = z.object({
  help: z.boolean().optional(),
  cwd: z.string().min(1, "give a directory, e.g. --cwd ../project").optional(),
  json: z.boolean().optional(),
});

/** The flags `sessions` and `replay` share: `--cwd DIR`, `--json`, `--help`. */
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
      options: { help: { type: "boolean", short: "h" }, cwd: { type: "string" }, json: { type: "boolean" } },
    },
    argv,
  );
}
