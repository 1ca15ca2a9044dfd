import {
  buildCacheSafeParams,
  type CacheSafeParams,
  defaultMaxOutputTokens,
  type ModelInfo,
  type Tool,
} from "@forkloop/loop-core";
import { assembleSession } from "@forkloop/orchestrator";
import type { BatchSpec } from "./batch-store.js";

/**
 * R-F3: the one prefix (tools → system) every item of a batch starts with, so each item's first
 * request reads it from the cache; built as the loop builds its own, with the model's output cap
 * (a models file may lower it). The dry run estimates from the same prefix the run sends. `cwd`
 * is where the items work: the spec's own, or a `forkloop worker`'s checkout on its host.
 * Project files the prefix leaves out (R-S8) are named once each on `onNotice`.
 */
export async function batchPrefix(
  spec: BatchSpec,
  tools: readonly Tool[],
  modelOverrides: readonly ModelInfo[],
  cwd: string = spec.cwd,
  onNotice: (line: string) => void = () => {},
): Promise<CacheSafeParams> {
  const session = await assembleSession({
    cwd,
    model: spec.model,
    permissionMode: spec.permissionMode,
    tools: [...tools],
    ...(spec.appendSystemPrompt === undefined ? {} : { appendSystemPrompt: spec.appendSystemPrompt }),
  });
  for (const line of session.refused) onNotice(line);
  return buildCacheSafeParams({
    model: spec.model,
    systemPrompt: session.systemPrompt,
    tools: [...tools],
    maxOutputTokens: defaultMaxOutputTokens(spec.model, modelOverrides),
    // R-L17: the items' thinking (batch.json's) is part of the prefix's cache key.
    ...(spec.loop?.thinking === undefined ? {} : { thinking: spec.loop.thinking }),
    messages: [],
  });
}
