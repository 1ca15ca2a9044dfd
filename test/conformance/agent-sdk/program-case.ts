import type { Script } from "../support/script.js";

export function scriptOf(programCase: ProgramCase): Script {
  return typeof programCase.script === "function" ? programCase.script() : programCase.script;
}

/** A corpus program's harness side: what it proves, its scripted model, its working files. */
export interface ProgramCase {
  /** One line: what the program exercises (the test title). */
  what: string;
  /** The scripted model; a factory when it keeps state (each side's run gets its own). */
  script: Script | (() => Script);
  /** Files written into the program's working directory before it starts. */
  files?: Readonly<Record<string, string>>;
  /**
   * Texts the program puts into a system prompt (`systemPrompt`, its `append`, an agent's
   * `prompt`): for each role, whether its system prompt holds each of them is compared.
   */
  systemTexts?: readonly string[];
  /**
   * Texts that must reach the model by the last main request (a hook's context after a tool
   * batch): where each side's holds each — system prompt, a system message, a user message — is
   * compared.
   */
  lastRequestTexts?: readonly string[];
  /** As `lastRequestTexts`, in the sub-agents' last request (a SubagentStart hook's context). */
  subAgentLastRequestTexts?: readonly string[];
  /** Default 150 s (see run-program.ts). */
  timeoutMs?: number;
}
