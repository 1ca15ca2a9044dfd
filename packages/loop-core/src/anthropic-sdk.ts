import type Anthropic from "@anthropic-ai/sdk";
import type * as SdkErrors from "@anthropic-ai/sdk/core/error";

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

let errors: typeof SdkErrors | undefined;
let loadingErrors: Promise<typeof SdkErrors> | undefined;

/**
 * The SDK's error classes (the client's own: the SDK's index re-exports this module), loaded
 * before a model call's first attempt. Alone, not with the whole SDK: a call given a client (a
 * worker's, which has only the Messages resources) never loads the rest (R-V2).
 */
export function loadAnthropicErrors(): Promise<typeof SdkErrors> {
  loadingErrors ??= import("@anthropic-ai/sdk/core/error").then((module) => {
    errors = module;
    return module;
  });
  return loadingErrors;
}

/**
 * The SDK's error classes if loaded, else undefined. An error can only be one of the SDK's once
 * they are, so `instanceof` checks on a thrown error read this synchronously.
 */
export function loadedAnthropicErrors(): typeof SdkErrors | undefined {
  return errors;
}
