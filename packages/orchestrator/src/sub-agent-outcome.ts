import {
  costUsd,
  type Message,
  type ModelInfo,
  sumUsage,
  type Terminal,
  type TerminalReason,
  type Usage,
  usageTotalsOf,
} from "@forkloop/loop-core";
import {
  type CompactionRecord,
  EMPTY_USAGE,
  type SubAgentResult,
  type SubAgentTask,
} from "./sub-agent-types.js";

/** What a worker agent spent so far: its turns, usage and cost, its compactions' included. */
export class AgentSpending {
  turns = 0;
  usage = EMPTY_USAGE;
  costUsd = 0;
  readonly #compactions: CompactionRecord[] = [];
  readonly #modelInfo: ModelInfo;

  constructor(modelInfo: ModelInfo) {
    this.#modelInfo = modelInfo;
  }

  /** One run of its loop, to its terminal, and what its replies cost. */
  addTurn(terminal: Pick<Terminal, "turnCount" | "usage">, cost: number): void {
    this.turns += terminal.turnCount;
    this.usage = sumUsage(this.usage, terminal.usage);
    this.costUsd += cost;
  }

  /** A compact or session-memory request of its own (priced on the agent's model). */
  addRequest(usage: Usage): void {
    this.usage = sumUsage(this.usage, usageTotalsOf([usage]));
    this.costUsd += costUsd(this.#modelInfo, usage);
  }

  addCompaction(record: CompactionRecord): void {
    this.#compactions.push({ ...record });
  }

  /** The result's fields: turns, usage, cost and (when any) the compactions. */
  fields(): Pick<SubAgentResult, "turns" | "usage" | "costUsd" | "compactions"> {
    return {
      turns: this.turns,
      usage: this.usage,
      costUsd: this.costUsd,
      ...(this.#compactions.length === 0 ? {} : { compactions: this.#compactions }),
    };
  }
}

/** A sub-agent's result: nothing spent unless `fields` says so, timed from `started`. */
export function subAgentResult(
  agentId: string,
  started: number,
  status: SubAgentResult["status"],
  fields: Partial<SubAgentResult>,
): SubAgentResult {
  return {
    agentId,
    status,
    text: "",
    turns: 0,
    usage: EMPTY_USAGE,
    costUsd: 0,
    ...fields,
    durationMs: performance.now() - started,
  };
}

/**
 * How a run that reached its terminal ended: status, final text and the error (a cancel's
 * reason); an API error keeps its HTTP status (null: no response), which its text in Claude
 * Code's words needs (R-X1: a failed /compact's `API Error: 400 …`).
 */
export function terminalOutcome(
  terminal: Terminal,
  cancelled: boolean,
  signal: AbortSignal,
): Pick<SubAgentResult, "status" | "terminal" | "text" | "error"> {
  const status = statusOf(terminal.reason, cancelled);
  return {
    status,
    terminal: terminal.reason,
    text: finalText(terminal.messages),
    ...(terminal.error === undefined
      ? status === "cancelled"
        ? { error: { code: "cancelled", message: String(signal.reason ?? "cancelled") } }
        : {}
      : {
          error: {
            code: terminal.error.type,
            message: terminal.error.message,
            ...(terminal.error.status === undefined ? {} : { status: terminal.error.status }),
          },
        }),
  };
}

/** The text of a task's prompt (what UserPromptSubmit sees). */
export function promptText(messages: SubAgentTask["promptMessages"]): string {
  return messages
    .flatMap((message) => {
      const content = "message" in message ? message.message.content : message.content;
      if (typeof content === "string") return [content];
      return content.flatMap((block) => (block.type === "text" ? [block.text] : []));
    })
    .join("\n");
}

export function finalText(messages: readonly Message[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.type === "assistant" && !message.apiError) {
      const text = message.message.content
        .map((block) => (block.type === "text" ? block.text : ""))
        .join("")
        .trim();
      if (text.length > 0) return text;
    }
  }
  return "";
}

// Typed subsets of loop-core's TERMINAL_REASONS: a reason renamed there fails the typecheck here.
const FAILED_TERMINALS: ReadonlySet<TerminalReason> = new Set<TerminalReason>([
  "model_error",
  "prompt_too_long",
  "blocking_limit",
  "image_error",
]);
const ABORTED_TERMINALS: ReadonlySet<TerminalReason> = new Set<TerminalReason>([
  "aborted_streaming",
  "aborted_tools",
]);

/** How a sub-agent's run ended, from its terminal and whether the parent cancelled it. */
function statusOf(reason: TerminalReason, cancelled: boolean): SubAgentResult["status"] {
  if (cancelled || ABORTED_TERMINALS.has(reason)) return "cancelled";
  return FAILED_TERMINALS.has(reason) ? "failed" : "completed";
}
