import type Anthropic from "@anthropic-ai/sdk";

/**
 * The official SDK, loaded when the first model client is made (R-V2): it and its tracing
 * dependency are over three hundred modules, which importing any forkloop package would
 * otherwise pay for before a session starts. One load per process, shared by every caller.
 */
let loaded: typeof Anthropic | undefined;
let loading: Promise<typeof Anthropic> | undefined;

export function loadAnthropicSdk(): Promise<typeof Anthropic> {
  loading ??= import("@anthropic-ai/sdk").then((module) => {
    loaded = module.default;
    return loaded;
  });
  return loading;
}

/**
 * The SDK if it is loaded, else undefined. An error can only be one of the SDK's once the SDK
 * is loaded, so `instanceof` checks on a thrown error read this synchronously.
 */
export function loadedAnthropicSdk(): typeof Anthropic | undefined {
  return loaded;
}
