import Anthropic from "@anthropic-ai/sdk";
import { type Brain, type BrainReply, type FaultSpec, type Simulator, startSimulator } from "@forkloop/sim";
import { afterEach, expect } from "vitest";
import { createUserMessage } from "../create-message.js";
import type { Message } from "../messages.js";
import { type QueryParams, query } from "../query.js";
import { collect, testContext, testTool } from "../testing/index.js";
import type { Tool } from "../tool.js";

/**
 * Test-only: a simulator per test, closed after it, and an SDK client pointed at it (real HTTP,
 * the official SDK). Not part of the build (tsconfig.build.json excludes this folder).
 */
export function useSimulator(): {
  start(
    brain: Brain | readonly BrainReply[],
    options?: { faults?: FaultSpec; slowModels?: boolean },
  ): Promise<SimHandle>;
} {
  const open: Simulator[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((sim) => sim.close()));
  });
  return {
    async start(brain, options = {}) {
      const replies = Array.isArray(brain) ? [...brain] : undefined;
      const sim = await startSimulator({
        brain: replies
          ? (request) => replies[request.turnIndex] ?? { content: [{ type: "text", text: "done" }] }
          : (brain as Brain),
        models: [
          {
            id: "tiny-window",
            aliases: [],
            contextWindow: 2_000,
            maxOutputTokens: 64_000,
            inputPricePerMTok: 3,
            outputPricePerMTok: 15,
            minCacheableTokens: 1024,
            thinking: { enabled: true, adaptive: false, disabled: true },
          },
        ],
        ...(options.faults ? { faults: options.faults } : {}),
      });
      open.push(sim);
      const client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
      return {
        sim,
        client,
        messageRequests: () => sim.requests().filter((record) => record.path === "/v1/messages"),
      };
    },
  };
}

export interface SimHandle {
  readonly sim: Simulator;
  readonly client: Anthropic;
  /** Only `POST /v1/messages` records. */
  messageRequests(): ReturnType<Simulator["requests"]>;
}

/** Retry waits short enough for tests (the waits themselves are not under test). */
export const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5 } as const;

/** Params for a `query()` against the simulator: fast retries, one user prompt, main agent. */
export function simParams(
  handle: SimHandle,
  overrides: Partial<QueryParams> & {
    readonly prompt?: string;
    readonly tools?: readonly Tool[];
    readonly model?: string;
  } = {},
): QueryParams {
  const { prompt, tools, model, ...rest } = overrides;
  return {
    messages: [createUserMessage(prompt ?? "Do the task.")],
    systemPrompt: "You are a test agent.",
    toolUseContext: testContext({ tools: tools ?? [], ...(model ? { model } : {}) }),
    querySource: "sdk",
    client: handle.client,
    retry: FAST_RETRY,
    ...rest,
  };
}

/** Sends `messages` plus a new user turn to the simulator: the referee for a history's validity. */
export async function assertHistoryAccepted(handle: SimHandle, messages: readonly Message[]): Promise<void> {
  const before = handle.messageRequests().length;
  // A history with tool blocks needs its tools defined (the API refuses it otherwise).
  const names = new Set(
    messages.flatMap((m) =>
      m.type === "assistant" ? m.message.content.flatMap((b) => (b.type === "tool_use" ? [b.name] : [])) : [],
    ),
  );
  const { terminal } = await collect(
    query({
      ...simParams(handle, { tools: [...names].map((name) => testTool({ name })) }),
      messages: [...messages, createUserMessage("Carry on.")],
      maxTurns: 1,
    }),
  );
  const record = handle.messageRequests()[before];
  expect(record?.error ?? null).toBeNull();
  expect(["completed", "max_turns"]).toContain(terminal.reason);
}

/** A loop-side model override: a 30,000-token window (hard limit 30,000 − 8,000 − 3,000 = 19,000). */
export const WINDOW_30K = {
  id: "claude-sonnet-4-6",
  contextWindow: 30_000,
  maxOutputTokens: 8_000,
  inputPricePerMTok: 3,
  outputPricePerMTok: 15,
} as const;
