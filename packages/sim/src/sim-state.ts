import { type BatchOptions, BatchStore } from "./batches.js";
import { CacheDiagnostics } from "./cache-diagnostics.js";
import type { FaultSpec } from "./faults.js";
import { type FileOptions, FileStore } from "./files.js";
import { IssuedThinking } from "./issued-thinking.js";
import { JsonSchemaChecker } from "./json-schema-check.js";
import type { LatencyModel } from "./latency.js";
import { ModelRegistry } from "./model-registry.js";
import { PromptCache } from "./prompt-cache.js";
import { RateLimiter } from "./rate-limiter.js";
import type { WebFixtures } from "./server-tools.js";
import { Sleeper } from "./sleeper.js";
import { ThreadStore } from "./threads.js";
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
  /** Keep at most this many records (oldest dropped first). */
  recordLimit: number;
  /** Count of `POST /v1/messages` requests so far (fault schedules index them from 1). */
  messagesCount: number;
  messageCounter: number;
  issuedThinking: IssuedThinking;
  diagnostics: CacheDiagnostics;
  /** Compiled JSON Schemas of strict tools and structured outputs. */
  schemaChecker: JsonSchemaChecker;
  /** The Message Batches API's batches (R-D4). */
  batches: BatchStore;
  /** Message threads' conversations by response id (R-D2). */
  threads: ThreadStore;
  /** The Files API's files (R-D4). */
  files: FileStore;
  /** What web search and web fetch answer from (R-D4). */
  web: WebFixtures;
}

/** Appends a record, dropping the oldest beyond the limit. */
export function addRecord(state: SimState, record: RequestRecord): void {
  state.records.push(record);
  if (state.records.length > state.recordLimit)
    state.records.splice(0, state.records.length - state.recordLimit);
}

export function createState(init: {
  models: ConstructorParameters<typeof ModelRegistry>[0];
  clock: () => number;
  seed: number;
  brain: Brain;
  faults: FaultSpec | undefined;
  latency: LatencyModel | null;
  rateLimits: ConstructorParameters<typeof RateLimiter>[0];
  recordLimit: number;
  batches?: BatchOptions;
  files?: FileOptions;
  web?: WebFixtures;
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
    recordLimit: init.recordLimit,
    messagesCount: 0,
    messageCounter: 0,
    issuedThinking: new IssuedThinking(),
    diagnostics: new CacheDiagnostics(),
    schemaChecker: new JsonSchemaChecker(),
    batches: new BatchStore(init.batches),
    threads: new ThreadStore(),
    files: new FileStore(init.files),
    web: init.web ?? {},
  };
}
