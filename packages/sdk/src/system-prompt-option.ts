import { SYSTEM_PROMPT_DYNAMIC_BOUNDARY } from "./agent-sdk-constants.js";
import type { SystemPromptOption } from "./options.js";

/**
 * The Agent SDK's `systemPrompt` as the text forkloop sends: a string, or a `string[]` joined
 * by blank lines. `SYSTEM_PROMPT_DYNAMIC_BOUNDARY` (a line, or an element, of its own) splits
 * Claude Code's prompt into a part cached across sessions and a per-session part; forkloop's
 * whole system prompt is one cached prefix, so the marker is taken out, never sent to the model.
 */
export function customSystemPrompt(option: SystemPromptOption | undefined): string | undefined {
  if (option === undefined || (typeof option === "object" && !Array.isArray(option))) return undefined;
  const parts = (typeof option === "string" ? [option] : option).map((part) =>
    part
      .split("\n")
      .filter((line) => line.trim() !== SYSTEM_PROMPT_DYNAMIC_BOUNDARY)
      .join("\n"),
  );
  return parts.filter((part) => part.trim() !== "").join("\n\n");
}
