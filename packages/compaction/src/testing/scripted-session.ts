import { createAgentState, type QueryParams, type Tool } from "@forkloop/loop-core";
import { z } from "zod";
import { withSummarizer } from "./summarizer-brain.js";

/**
 * A scripted coding session for tests and benchmarks against the simulator: a `Work` tool, a
 * main-agent brain that calls it once per turn, and the query() parameters of the main agent.
 * Structural brain types only (the compaction package may not import the simulator, SPEC §0).
 */

/** The Work tool: `lines` lines of output per call; `needle` is prepended at `needle.step`. */
export function createWorkTool(options: {
  readonly lines: number;
  readonly needle?: { readonly step: number; readonly text: string };
}): Tool {
  return {
    name: "Work",
    description: "Migrate one module to the structured logger and report the call sites changed.",
    inputSchema: z.object({ file_path: z.string(), step: z.number() }).loose(),
    isConcurrencySafe: () => true,
    isReadOnly: () => true,
    maxResultSizeChars: 100_000,
    call: async (input) => {
      const line = `migrated ${String(input.file_path)} call site ${String(input.step)}: logger.info(event, fields)\n`;
      const needle = options.needle && options.needle.step === input.step ? `${options.needle.text}\n` : "";
      return { content: `${needle}${line.repeat(options.lines)}` };
    },
  };
}

interface BrainLikeRequest {
  readonly querySource: string | null;
  readonly body: { readonly messages: readonly object[] };
}

type ScriptedBlock =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "thinking"; readonly thinking: string }
  | { readonly type: "tool_use"; readonly name: string; readonly input: Record<string, unknown> };

export interface ScriptedAgent {
  (request: BrainLikeRequest): { readonly content: readonly ScriptedBlock[] };
  /** Main-agent requests answered so far. */
  mainRequests(): number;
}

/**
 * The main agent: one Work call per turn (with `reasoning` as its text) until `turns`, then a
 * final answer. `note` makes the agent write a line at one step (how a fact from tool output
 * enters the agent's own words). Compact and session-memory requests get the extractive summary.
 */
export function createScriptedAgent(options: {
  readonly turns: number;
  readonly reasoning?: string;
  readonly note?: { readonly step: number; readonly text: string };
  readonly modules?: number;
  /** Start each reply with a thinking block (the simulator signs it; needs thinking enabled). */
  readonly thinking?: boolean;
}): ScriptedAgent {
  let step = 0;
  const main = (_request: BrainLikeRequest): { readonly content: readonly ScriptedBlock[] } => {
    step++;
    if (step > options.turns)
      return { content: [{ type: "text", text: `All ${options.turns} steps done.` }] };
    const note: ScriptedBlock[] =
      options.note?.step === step ? [{ type: "text", text: options.note.text }] : [];
    const thinking: ScriptedBlock[] = options.thinking
      ? [{ type: "thinking", thinking: `Plan for step ${step}.` }]
      : [];
    return {
      content: [
        ...thinking,
        ...note,
        { type: "text", text: `Step ${step}: ${options.reasoning ?? "rewriting the printf-style calls."}` },
        {
          type: "tool_use",
          name: "Work",
          input: { file_path: `/src/mod${step % (options.modules ?? 25)}.ts`, step },
        },
      ],
    };
  };
  const brain = withSummarizer(main) as (request: BrainLikeRequest) => {
    readonly content: readonly ScriptedBlock[];
  };
  return Object.assign(brain, { mainRequests: () => step });
}

/** query() parameters of a main agent with one task, the given tools and model (no pipeline). */
export function mainAgentParams(options: {
  readonly client: NonNullable<QueryParams["client"]>;
  readonly model: string;
  readonly tools: readonly Tool[];
  readonly task: string;
  readonly systemPrompt: string;
}): QueryParams {
  return {
    messages: [
      {
        type: "user",
        uuid: "task",
        parentUuid: null,
        timestamp: new Date().toISOString(),
        message: { role: "user", content: options.task },
      },
    ],
    systemPrompt: options.systemPrompt,
    toolUseContext: {
      cwd: process.cwd(),
      workspaceRoots: [process.cwd()],
      tools: options.tools,
      abortController: new AbortController(),
      agentId: "main",
      agentState: createAgentState(),
      options: { model: options.model, permissionMode: "bypassPermissions" },
    },
    querySource: "repl_main_thread",
    client: options.client,
  };
}
