import type Anthropic from "@anthropic-ai/sdk";

/**
 * The official SDK, loaded when the first model client is made (R-V2): it and its tracing
 * dependency are over three hundred modules, which importing any forkloop package would
 * otherwise pay for before a session starts. One load per process, shared by every caller.
 */
let loading: Promise<typeof Anthropic> | undefined;

export function loadAnthropicSdk(): Promise<typeof Anthropic> {
  loading ??= import("@anthropic-ai/sdk").then((module) => module.default);
  return loading;
}
