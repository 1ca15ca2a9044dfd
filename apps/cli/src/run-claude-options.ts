import { createWriteStream, mkdirSync, type WriteStream } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { apiOutputSchema } from "@forkloop/loop-core";
import { builtinToolNames, FORK_TOOL_NAMES, type Options } from "@forkloop/sdk";
import { agentsFlag, jsonSchemaFlag } from "./claude-flag-values.js";
import { CliError } from "./cli-error.js";
import type { CommandContext } from "./command-context.js";
import type { RunFlags } from "./commands/run-flags.js";
import { closestFlag } from "./flags.js";

/**
 * The query() options of Claude Code's print-mode flags forkloop run reads (R-X3): the tool set,
 * custom agents, structured output, effort, the session's id and forking, the permission-prompt tool.
 */
export function claudeCodeOptions(flags: RunFlags, cwd: string): Partial<Options> {
  const tools = flags.tools ?? (flags.bare ? BARE_TOOLS : undefined);
  const given = flags["disallowed-tools"] ?? [];
  const selected = tools === undefined ? {} : toolsFlag(tools, given);
  // --restricted takes out what --tools does not name, beside what the tool set took out.
  const restrictedOut = flags.restricted && flags.tools === undefined ? RESTRICTED_OUT : [];
  const disallowed = [...(selected.disallowedTools ?? given), ...restrictedOut];
  return {
    ...selected,
    ...(disallowed.length === given.length ? {} : { disallowedTools: disallowed }),
    ...(flags.bare ? { bare: true } : {}),
    ...(flags["safe-mode"] ? { safeMode: true } : {}),
    // --restricted, as Claude Code's: no settings files (--settings still applies), no memory files.
    ...(flags.restricted ? { settingSources: [], memoryFiles: false } : {}),
    ...(flags.agents === undefined ? {} : { agents: agentsFlag(flags.agents, cwd) }),
    ...(flags["json-schema"] === undefined
      ? {}
      : {
          outputFormat: { type: "json_schema" as const, schema: runOutputSchema(flags["json-schema"], cwd) },
        }),
    ...(flags.effort === undefined ? {} : { effort: flags.effort }),
    ...(flags["session-id"] === undefined ? {} : { sessionId: flags["session-id"].toLowerCase() }),
    ...(flags["fork-session"] ? { forkSession: true } : {}),
    ...(flags["permission-prompt-tool"] === undefined
      ? {}
      : { permissionPromptToolName: flags["permission-prompt-tool"] }),
  };
}

/**
 * `--json-schema`: the request carries the schema with the constraints structured outputs do not
 * support moved into descriptions, as the official SDK's helpers send it (apiOutputSchema); a
 * schema that cannot be sent is exit 2 naming the fix.
 */
function runOutputSchema(value: string, cwd: string): Record<string, unknown> {
  const schema = jsonSchemaFlag(value, cwd);
  try {
    return apiOutputSchema(schema);
  } catch (error) {
    throw new CliError(
      `--json-schema: ${error instanceof Error ? error.message : String(error)}; give a JSON Schema whose type is "object" and whose properties each have a type, e.g. --json-schema '{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}'.`,
    );
  }
}

/**
 * `--restricted` takes out the tools that run code (Bash) or reach the network (WebFetch), as
 * Claude Code's does, unless --tools names them; bypassPermissions is refused (run-flags.ts).
 */
const RESTRICTED_OUT = ["Bash", "WebFetch"];

/** `--bare`'s tool set unless --tools names one: Claude Code's minimal mode offers these three. */
const BARE_TOOLS = "Bash,Edit,Read";

/**
 * `--tools "Read,Grep"` (or spaces), `""` for none, `default` for every built-in tool. As in
 * Claude Code the list is the whole set: Agent (or Task) is offered only when it is named, and
 * SendMessage too (`--tools Read,Agent` offers Agent and Read alone).
 */
function toolsFlag(value: string, disallowed: readonly string[]): Pick<Options, "tools" | "disallowedTools"> {
  const names = value.split(/[\s,]+/).filter((name) => name !== "");
  if (names.length === 1 && names[0] === "default")
    return { tools: { type: "preset", preset: "claude_code" } };
  const known = [...builtinToolNames(), ...FORK_TOOL_NAMES];
  for (const name of names) {
    if (!known.includes(name)) {
      const suggestion = closestFlag(name, known);
      throw new CliError(
        `--tools: unknown tool "${name}"${suggestion ? ` (did you mean ${suggestion}?)` : ""}; the built-in tools are ${known.join(", ")} ("" for none, "default" for all).`,
      );
    }
  }
  // Task is Agent's former name: naming either offers the tool.
  const named = (tool: string) =>
    names.includes(tool) ||
    ((tool === "Agent" || tool === "Task") && (names.includes("Agent") || names.includes("Task")));
  const removed = FORK_TOOL_NAMES.filter((tool) => !named(tool));
  return {
    tools: names,
    ...(removed.length === 0 ? {} : { disallowedTools: [...disallowed, ...removed] }),
  };
}

/**
 * `--debug [filter]` / `--debug-file FILE`: the verbose lines (tool calls, retries, compactions)
 * in FILE, else in `<forkloop home>/debug/<session id>.txt` — as Claude Code writes its debug log to
 * `~/.claude/debug/<session id>.txt`, leaving stdout and stderr as without the flag. The file is
 * opened at the first line.
 */
export function debugLog(
  flags: RunFlags,
  context: CommandContext,
  userDir: string,
): { write: (line: string | undefined, sessionId: string) => void; close: () => Promise<void> } | undefined {
  const file = flags["debug-file"];
  if (file === undefined && flags.debug === undefined) return undefined;
  let stream: WriteStream | undefined;
  return {
    write: (line, sessionId) => {
      if (line === undefined) return;
      if (stream === undefined) {
        const path =
          file === undefined ? join(userDir, "debug", `${sessionId}.txt`) : resolve(context.cwd, file);
        mkdirSync(dirname(path), { recursive: true });
        stream = createWriteStream(path, { flags: "a" });
      }
      stream.write(`${line}\n`);
    },
    close: () => new Promise((done) => (stream === undefined ? done() : stream.end(done))),
  };
}
