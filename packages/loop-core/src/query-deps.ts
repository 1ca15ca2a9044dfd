import { randomUUID } from "node:crypto";
import { type ContextPipeline, passthroughContextPipeline } from "./context-pipeline.js";
import { callModel } from "./model-client.js";

/**
 * R-L13: everything the loop does to the outside world that a test may want to replace —
 * exactly four members, typed from the real functions so they cannot drift apart.
 */
export interface QueryDeps {
  readonly callModel: typeof callModel;
  readonly microcompact: ContextPipeline["microcompact"];
  readonly autocompact: ContextPipeline["autocompact"];
  /** Ids for messages; `randomUUID` in production, deterministic in tests. */
  readonly uuid: () => string;
}

/** The real model client; microcompact and autocompact come from the context pipeline. */
export function productionDeps(pipeline: ContextPipeline = passthroughContextPipeline): QueryDeps {
  return {
    callModel,
    microcompact: (input) => pipeline.microcompact(input),
    autocompact: (input) => pipeline.autocompact(input),
    uuid: randomUUID,
  };
}
