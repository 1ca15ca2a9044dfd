import type { z } from "zod";
import type { JsonSchemaObject } from "./json-schema-input.js";
import type { ContentBlockParam } from "./messages.js";
import type { PermissionMode } from "./permissions.js";

/** A todo item kept in agent state by the TodoWrite tool. */
export interface TodoItem {
  readonly content: string;
  readonly status: "pending" | "in_progress" | "completed";
  readonly activeForm?: string;
}

/**
 * Per-agent mutable state shared by the tools of one agent (never between agents):
 * what was read (Write/Edit refuse stale or unread files) and the todo list.
 */
export interface AgentState {
  readonly readFiles: Map<string, { readonly mtimeMs: number; readonly size: number }>;
  todos: readonly TodoItem[];
}

export function createAgentState(): AgentState {
  return { readFiles: new Map(), todos: [] };
}

export interface ToolUseContext {
  /** Working directory that relative paths resolve against. */
  readonly cwd: string;
  /** File tools are confined to these absolute roots (R-P1). */
  readonly workspaceRoots: readonly string[];
  readonly tools: readonly Tool[];
  /**
   * Names a bare deny rule took out of `tools` (R-P1): a call the model makes to one anyway is
   * told the tool is disabled for the session, as Claude Code words it (R-X1).
   */
  readonly disabledTools?: readonly string[];
  /** Aborted on Ctrl+C or submit-interrupt; `signal.reason` tells which (R-L16). */
  readonly abortController: AbortController;
  /** `main` for the top-level agent, otherwise the sub-agent's id. */
  readonly agentId: string;
  readonly agentState: AgentState;
  readonly options: {
    readonly model: string;
    readonly permissionMode: PermissionMode;
    readonly debug?: boolean;
  };
}

/** What a tool returns: content for the tool_result block; `isError` marks an expected failure. */
export interface ToolResult {
  readonly content: string | readonly ContentBlockParam[];
  readonly isError?: boolean;
  /**
   * The tool's own structured output (Claude Code's `toolUseResult`, e.g. Read's `{type, file}`,
   * Bash's `{stdout, stderr, …}`): never sent to the model; the user message carries it to
   * stream-json's `tool_use_result`, the SDK's user messages and PostToolUse hooks' `tool_response`
   * (R-K2, R-X1). Without it they get the result's text (`toolUseResultOf`).
   */
  readonly output?: unknown;
}

/**
 * A call's `tool_use_result` / `tool_response`, one answer for every surface (R-K2, R-X1): the
 * tool's structured output, else the result's text (blocks other than text named by their type),
 * a failed call's as Claude Code gives it.
 */
export function toolUseResultOf(result: ToolResult): unknown {
  if (result.output !== undefined) return result.output;
  const text = resultText(result.content);
  if (result.isError !== true) return text;
  // A failed call's is its error, as Claude Code words it: `Error: ` and the message, untagged.
  const untagged = /^<tool_use_error>([\s\S]*)<\/tool_use_error>$/.exec(text)?.[1] ?? text;
  return `Error: ${untagged}`;
}

/** A tool_result's content as text: blocks other than text are named by their type (`[image]`). */
function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block: { type?: string; text?: string }) =>
      block.type === "text" ? (block.text ?? "") : `[${block.type}]`,
    )
    .join("\n");
}

/**
 * Static hints about what a tool does, as MCP servers declare them (the Agent SDK's `tool()` takes
 * the same). Hints from a server are not guarantees; forkloop reads only `readOnlyHint`.
 */
export interface ToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/**
 * The Tool contract's reading of annotations (R-M1): `readOnlyHint` makes a tool read-only and
 * concurrency-safe; anything else (no hint, `false`, only other hints) makes it neither. A worker's
 * proxy of an annotated parent tool answers with the same functions, so both sides agree.
 */
export function annotationTraits(
  annotations: ToolAnnotations | undefined,
): Pick<Tool, "isReadOnly" | "isConcurrencySafe"> {
  const readOnly = annotations?.readOnlyHint === true;
  return { isReadOnly: () => readOnly, isConcurrencySafe: () => readOnly };
}

/** Where an MCP tool comes from, as a client shows its calls. */
export interface McpToolOrigin {
  /** The name the server reports for itself, else its key in the configuration. */
  readonly serverName: string;
  /** The tool's own name on the server (without the `mcp__<server>__` prefix). */
  readonly toolName: string;
  /** The title the server gives the tool (`title`, else `annotations.title`), if any. */
  readonly title?: string;
}

/**
 * A tool the model can call. Input is validated with `inputSchema` before `call` runs (R-T1);
 * invalid input never reaches `call`. `call` should return `{ isError: true }` for expected
 * failures and may throw only for bugs (the executor turns a throw into an is_error result too).
 */
export interface Tool<
  Schema extends z.ZodType<Record<string, unknown>> = z.ZodType<Record<string, unknown>>,
> {
  readonly name: string;
  /** Other names the model may use for this tool (e.g. `Task` for `Agent`). */
  readonly aliases?: readonly string[];
  readonly description: string;
  readonly inputSchema: Schema;
  /**
   * For tools whose input is defined by JSON Schema (MCP tools, a parent's tool proxied into a
   * worker): the schema the API is sent, as is. Build both fields with `jsonSchemaInput()`, so
   * `inputSchema` validates with this very schema; without it the definition is zod's JSON Schema.
   */
  readonly inputJSONSchema?: JsonSchemaObject;
  /** Static hints (MCP tools); `isReadOnly`/`isConcurrencySafe` then follow `annotationTraits`. */
  readonly annotations?: ToolAnnotations;
  /** An MCP tool's origin, for display (the Agent SDK's `tool_use_meta`, R-K2). */
  readonly mcpOrigin?: McpToolOrigin;
  /** True when this call may run in parallel with other safe calls (R-T2). */
  isConcurrencySafe(input: z.infer<Schema>): boolean;
  /** True when this call changes nothing (plan mode allows only these, R-P1). */
  isReadOnly(input: z.infer<Schema>): boolean;
  /** Results longer than this are cut (R-C0); `Infinity` exempts the tool. */
  readonly maxResultSizeChars: number;
  /** Fills in derived input (e.g. relative → absolute path) after validation (R-T1). */
  backfillInput?(input: z.infer<Schema>, context: ToolUseContext): z.infer<Schema>;
  /**
   * `userModified`: the permission asker (a prompt tool, `canUseTool`) allowed the call with an
   * input other than the model's; a file tool says so in its result, as Claude Code does (R-X1).
   */
  call(
    input: z.infer<Schema>,
    context: ToolUseContext & { readonly toolUseId: string; readonly userModified?: boolean },
  ): Promise<ToolResult>;
}
