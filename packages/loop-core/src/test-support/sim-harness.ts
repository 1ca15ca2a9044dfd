import Anthropic from "@anthropic-ai/sdk";
import { type Brain, type BrainReply, type FaultSpec, type Simulator, startSimulator } from "@forkloop/sim";
import { afterEach } from "vitest";

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
