import { OptionsError } from "./options-error.js";

/**
 * What a `forkloop run` prompt asks for. A prompt whose first word is `/name` is a slash command,
 * as in Claude Code; only `/compact` exists so far. A first word with a second slash (`/tmp/a.txt
 * explain this`) is a path, not a command, so such prompts still reach the model.
 */
export type RunRequest =
  | { readonly kind: "prompt"; readonly prompt: string }
  | { readonly kind: "compact"; readonly instructions: string };

export const SLASH_COMMANDS = ["/compact [instructions]"] as const;

const SLASH_COMMAND = /^\/([A-Za-z][\w-]*)(?=\s|$)\s*([\s\S]*)$/;

export function parseRunRequest(prompt: string): RunRequest {
  const match = SLASH_COMMAND.exec(prompt.trim());
  if (!match) return { kind: "prompt", prompt };
  const [, name = "", rest = ""] = match;
  if (name === "compact") return { kind: "compact", instructions: rest.trim() };
  throw new OptionsError(
    `run: unknown slash command /${name}. Known: ${SLASH_COMMANDS.join(", ")}. To send a prompt that starts with a slash, put a word before it.`,
  );
}
