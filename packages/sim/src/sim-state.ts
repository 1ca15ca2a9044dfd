import type { FaultSpec } from "./faults.js";
import type { LatencyModel } from "./latency.js";
import { ModelRegistry } from "./model-registry.js";
import { PromptCache } from "./prompt-cache.js";
import { RateLimiter } from "./rate-limiter.js";
import { Sleeper } from "./sleeper.js";
import type { Brain, RequestRecord } from "./types.js";

/** Everything one running simulator holds; no module-level state (STYLE habit 6). */
export interface SimState {
  registry: ModelRegistry;
  cache: PromptCache;
  limiter: RateLimiter;
  sleeper: Sleeper;
  clock: () => number;
  seed: number;
  brain: Brain;
  faults: FaultSpec | undefined;
  /** Null = no latency. */
  latency: LatencyModel | null;
  records: RequestRecord[];
  /** Count of `POST /v1/messages` requests so far (fault schedules index them from 1). */
  messagesCount: number;
  messageCounter: number;
}

export function createState(init: {
  models: ConstructorParameters<typeof ModelRegistry>[0];
  clock: () => number;
  seed: number;
  brain: Brain;
  faults: FaultSpec | undefined;
  latency: LatencyModel | null;
  rateLimits: ConstructorParameters<typeof RateLimiter>[0];
}): SimState {
  return {
    registry: new ModelRegistry(init.models),
    cache: new PromptCache(init.clock),
    limiter: new RateLimiter(init.rateLimits, init.clock),
    sleeper: new Sleeper(),
    clock: init.clock,
    seed: init.seed,
    brain: init.brain,
    faults: init.faults,
    latency: init.latency,
    records: [],
    messagesCount: 0,
    messageCounter: 0,
  };
}
