import type { SubAgentBashOptions } from "@forkloop/orchestrator";
import {
  bashToolOptions,
  loadModelsFile,
  mergeRules,
  type RunEnvironment,
  selectTools,
  toModelOverrides,
} from "@forkloop/sdk";
import { type DryRunEstimate, estimateDryRun } from "./batch-dry-run.js";
import type { BatchPlan } from "./batch-plan.js";
import { batchPrefix } from "./batch-prefix.js";

/**
 * R-F4: a new batch's first requests, estimated from the shared prefix of the built-in tools
 * (MCP servers start only for a real run) and the items' prompts — `--dry-run`'s answer, and the
 * budget's guess before any item settled. `FORKLOOP_MODELS` in `env` gives the model's figures.
 */
export async function estimateNewBatch(
  plan: Extract<BatchPlan, { kind: "new" }>,
  settings: RunEnvironment["settings"],
  bash: SubAgentBashOptions,
  host: {
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly warn: (line: string) => void;
  },
): Promise<DryRunEstimate> {
  const rules = mergeRules(settings, { allow: plan.spec.allowedTools, deny: plan.spec.disallowedTools });
  const models = host.env.FORKLOOP_MODELS;
  const modelOverrides = toModelOverrides(
    models ? await loadModelsFile(models, "FORKLOOP_MODELS", plan.spec.cwd) : [],
  );
  const prefix = await batchPrefix(
    plan.spec,
    selectTools(rules.deny, bashToolOptions(bash)),
    modelOverrides,
    plan.spec.cwd,
    host.warn,
  );
  return estimateDryRun(plan.loaded, prefix, modelOverrides, plan.spec.reduce);
}
