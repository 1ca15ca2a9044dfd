import type { ApiMessage } from "@forkloop/loop-core";
import { toolsUsedNote } from "./agent-hand-back.js";
import type { SubAgentEvent, SubAgentResult } from "./sub-agent-types.js";

/**
 * The Agent tool's structured output (R-K2, R-X1): what Claude Code 2.1.332 gives as a finished
 * foreground sub-agent's `tool_use_result` and PostToolUse `tool_response` — never sent to the
 * model, whose tool_result is the report in Claude Code's frame (agent-hand-back.ts). Claude Code's harness bookkeeping
 * (harnessNoteCount, harnessTailCount, harnessSectionHash) has no counterpart here and is left out.
 */
export interface AgentToolOutput {
  readonly status: "completed";
  readonly prompt: string;
  readonly agentId: string;
  readonly agentType: string;
  /** Absent, as toolStats is, when the sub-agent called no tool (as in Claude Code). */
  readonly toolsUsed?: readonly string[];
  readonly content: readonly { readonly type: "text"; readonly text: string }[];
  readonly resolvedModel: string;
  readonly totalDurationMs: number;
  /** The last request's tokens, all kinds (Claude Code's: the context the sub-agent ended with). */
  readonly totalTokens: number;
  readonly totalToolUseCount: number;
  /** The last reply's usage, as Claude Code writes it (claudeCodeUsage). */
  readonly usage: Readonly<Record<string, unknown>>;
  readonly toolStats?: ToolStats;
  /**
   * True when a SendMessage to it resumes it from its saved transcript (R-T5, resume-agent.ts):
   * the session's transcripts are kept and it did not work in a worktree of its own.
   */
  readonly canContinueAgent: boolean;
}

/** Claude Code's count of a sub-agent's tool calls by kind, with the lines its edits wrote. */
export interface ToolStats {
  readCount: number;
  searchCount: number;
  bashCount: number;
  editFileCount: number;
  linesAdded: number;
  linesRemoved: number;
  otherToolCount: number;
}

/** What one sub-agent did, gathered from its events as it runs (its calls, its last reply). */
export class SubAgentActivity {
  private readonly calls: { readonly name: string; readonly input: unknown }[] = [];
  private lastReply: ApiMessage | undefined;

  constructor(private readonly agentId: string) {}

  /** Takes an event of the pool's stream; other agents' events are ignored. */
  observe(event: SubAgentEvent): void {
    if (event.agentId !== this.agentId) return;
    if (event.type === "tool_use") this.calls.push({ name: event.name, input: event.input });
    else if (event.type === "assistant_message") this.lastReply = event.message;
  }

  /** The finished sub-agent's output, or undefined when it did not complete (its error is the result). */
  output(
    result: SubAgentResult,
    call: {
      readonly prompt: string;
      readonly agentType: string;
      readonly model: string;
      readonly canContinue: boolean;
      /** Tools the parent's conversation already named: left out of the content's note (R-X1). */
      readonly alreadyNamed?: ReadonlySet<string>;
    },
  ): AgentToolOutput | undefined {
    if (result.status !== "completed") return undefined;
    const usage = this.lastReply?.usage;
    const unnamed = toolsUsed(this.calls).filter((name) => !call.alreadyNamed?.has(name));
    return {
      status: "completed",
      prompt: call.prompt,
      agentId: result.agentId,
      agentType: call.agentType,
      ...(this.calls.length === 0 ? {} : { toolsUsed: toolsUsed(this.calls) }),
      // After a tool call Claude Code's content starts with its note of the tools used that the
      // parent's conversation had not named yet.
      content: [
        ...(unnamed.length === 0 ? [] : [{ type: "text" as const, text: toolsUsedNote(unnamed) }]),
        { type: "text", text: result.text },
      ],
      resolvedModel: this.lastReply?.model ?? call.model,
      totalDurationMs: result.durationMs,
      totalTokens:
        usage === undefined
          ? 0
          : usage.input_tokens +
            (usage.cache_creation_input_tokens ?? 0) +
            (usage.cache_read_input_tokens ?? 0) +
            usage.output_tokens,
      totalToolUseCount: this.calls.length,
      usage: claudeCodeUsage(usage),
      ...(this.calls.length === 0 ? {} : { toolStats: toolStatsOf(this.calls) }),
      canContinueAgent: call.canContinue,
    };
  }
}

/**
 * A reply's usage in Claude Code's shape: the API's counts and the fields it fills in when the
 * API leaves them out (no thinking tokens counted apart, no server tools, standard speed).
 */
function claudeCodeUsage(usage: ApiMessage["usage"] | undefined): Readonly<Record<string, unknown>> {
  const api = (usage ?? {}) as Partial<ApiMessage["usage"]> & Record<string, unknown>;
  const cacheCreation = api.cache_creation_input_tokens ?? 0;
  return {
    output_tokens_details: { thinking_tokens: 0 },
    input_tokens: api.input_tokens ?? 0,
    cache_creation_input_tokens: cacheCreation,
    cache_read_input_tokens: api.cache_read_input_tokens ?? 0,
    output_tokens: api.output_tokens ?? 0,
    server_tool_use: api.server_tool_use ?? { web_search_requests: 0, web_fetch_requests: 0 },
    service_tier: api.service_tier ?? "standard",
    cache_creation: api.cache_creation ?? {
      ephemeral_1h_input_tokens: 0,
      ephemeral_5m_input_tokens: cacheCreation,
    },
    inference_geo: api.inference_geo ?? "",
    iterations: [],
    speed: "standard",
    fallback_credit: null,
  };
}

function toolsUsed(calls: readonly { readonly name: string }[]): string[] {
  return [...new Set(calls.map((call) => call.name))];
}

const SEARCH_TOOLS = new Set(["Grep", "Glob"]);
/** Calls that are not the sub-agent's work on the task (its plan), counted nowhere. */
const UNCOUNTED_TOOLS = new Set(["TodoWrite", "Agent"]);

/** Claude Code's tally: reads, searches, shell commands, file edits (with lines), the rest. */
function toolStatsOf(calls: readonly { readonly name: string; readonly input: unknown }[]): ToolStats {
  const stats: ToolStats = {
    readCount: 0,
    searchCount: 0,
    bashCount: 0,
    editFileCount: 0,
    linesAdded: 0,
    linesRemoved: 0,
    otherToolCount: 0,
  };
  for (const { name, input } of calls) {
    if (name === "Read") stats.readCount++;
    else if (SEARCH_TOOLS.has(name)) stats.searchCount++;
    else if (name === "Bash") stats.bashCount++;
    else if (UNCOUNTED_TOOLS.has(name)) continue;
    else {
      const lines = editedLines(name, input);
      if (lines === undefined) stats.otherToolCount++;
      else {
        stats.editFileCount++;
        stats.linesAdded += lines.added;
        stats.linesRemoved += lines.removed;
      }
    }
  }
  return stats;
}

/** An edit's lines as Claude Code counts them (each side's line count); undefined: not an edit. */
function editedLines(name: string, input: unknown): { added: number; removed: number } | undefined {
  const fields = (input ?? {}) as Record<string, unknown>;
  if (name === "Edit") return { added: lineCount(fields.new_string), removed: lineCount(fields.old_string) };
  if (name === "Write") return { added: lineCount(fields.content), removed: 0 };
  if (name === "NotebookEdit") return { added: lineCount(fields.new_source), removed: 0 };
  return undefined;
}

function lineCount(text: unknown): number {
  return typeof text === "string" && text.length > 0 ? text.split("\n").length : 0;
}
