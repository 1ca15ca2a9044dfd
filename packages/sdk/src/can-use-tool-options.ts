import { randomUUID } from "node:crypto";
import { isAbsolute, relative } from "node:path";

/** A permission change the program may accept (the Agent SDK's `PermissionUpdate`, the kinds forkloop offers). */
export type PermissionUpdate =
  | {
      type: "addRules";
      rules: { toolName: string; ruleContent?: string }[];
      behavior: "allow" | "deny" | "ask";
      destination: "userSettings" | "projectSettings" | "localSettings" | "session" | "cliArg";
    }
  | {
      type: "setMode";
      mode: "default" | "acceptEdits" | "bypassPermissions" | "plan" | "dontAsk" | "auto";
      destination: "userSettings" | "projectSettings" | "localSettings" | "session" | "cliArg";
    };

/** What `canUseTool` receives besides the tool's name and input (the Agent SDK's fields). */
export interface CanUseToolOptions {
  signal: AbortSignal;
  /** Changes that would let such calls run without asking (the rule that would allow this one). */
  suggestions?: PermissionUpdate[];
  /** Why it is asked, in forkloop's words. */
  decisionReason?: string;
  /** The tool as a prompt would name it. */
  displayName?: string;
  /** What the call does: a Bash call's description, the file an edit tool writes (relative to cwd). */
  description?: string;
  toolUseID: string;
  /** A sub-agent's id; absent for the main loop. */
  agentID?: string;
  /** Unique per question. */
  requestId?: string;
}

const FILE_EDIT_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"]);

/**
 * The options the Agent SDK passes `canUseTool`, from what forkloop's permission checker knows:
 * the suggestion is the rule that would allow the call (`Bash(npm test:*)` → Claude Code's
 * `npm test *`), or, for a file edit in default mode, accepting edits for the session — what
 * Claude Code offers.
 */
export function canUseToolOptions(
  toolName: string,
  input: Record<string, unknown>,
  asked: {
    signal: AbortSignal;
    toolUseId: string;
    agentId: string;
    reason?: string;
    suggestedRule?: string;
    mode: string;
    cwd: string;
  },
): CanUseToolOptions {
  const description = describeCall(toolName, input, asked.cwd);
  return {
    signal: asked.signal,
    suggestions: suggestionsFor(toolName, asked.suggestedRule, asked.mode),
    ...(asked.reason === undefined ? {} : { decisionReason: asked.reason }),
    displayName: toolName,
    ...(description === undefined ? {} : { description }),
    toolUseID: asked.toolUseId,
    ...(asked.agentId === "main" ? {} : { agentID: asked.agentId }),
    requestId: randomUUID(),
  };
}

function suggestionsFor(toolName: string, rule: string | undefined, mode: string): PermissionUpdate[] {
  if (FILE_EDIT_TOOLS.has(toolName) && mode === "default") {
    return [{ type: "setMode", mode: "acceptEdits", destination: "session" }];
  }
  const content = rule === undefined ? undefined : /^[^(]+\((.*)\)$/s.exec(rule)?.[1];
  return [
    {
      type: "addRules",
      rules: [
        content === undefined || content === ""
          ? { toolName }
          : { toolName, ruleContent: content.replace(/:\*$/, " *") },
      ],
      behavior: "allow",
      destination: "localSettings",
    },
  ];
}

function describeCall(toolName: string, input: Record<string, unknown>, cwd: string): string | undefined {
  if (toolName === "Bash") return typeof input.description === "string" ? input.description : undefined;
  const path = input.file_path ?? input.notebook_path;
  if (typeof path !== "string") return undefined;
  return isAbsolute(path) ? relative(cwd, path) : path;
}
