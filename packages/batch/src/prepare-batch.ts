import type { SubAgentBashOptions } from "@forkloop/orchestrator";
import {
  type LoopChoices,
  namedMcpServers,
  type ProjectState,
  type ResolvedMcpServers,
  type RunEnvironment,
  refuseDisabledBypass,
} from "@forkloop/sdk";
import type { SandboxMode } from "@forkloop/tools";
import type { DryRunEstimate } from "./batch-dry-run.js";
import { describeSkipped } from "./batch-items.js";
import type { BatchPlan } from "./batch-plan.js";
import {
  type BatchComposition,
  type BatchCompositionFlags,
  type BatchFlagReader,
  composeBatch,
} from "./compose-batch.js";
import { estimateNewBatch } from "./new-batch-estimate.js";
import type { QueuedMcpServer } from "./queue-store.js";
import type { StartSettings } from "./resume-settings.js";

/** The flags a batch's preparation reads beyond its composition: this host's sandbox and MCP servers. */
export interface BatchHostFlags extends BatchCompositionFlags {
  readonly sandbox?: SandboxMode | undefined;
  readonly "mcp-config"?: readonly string[] | undefined;
  readonly "strict-mcp-config"?: boolean | undefined;
}

/** What a batch is prepared from: the flags, the project, and its run environment, resolved once. */
export interface BatchPreparation<F extends BatchHostFlags> {
  readonly flags: F;
  readonly cwd: string;
  readonly state: ProjectState;
  /** The run environment (settings, rules, sandbox, MCP servers, endpoint); the caller closes it. */
  readonly environment: RunEnvironment;
  /**
   * Thinking, the summary model, context editing: the flags over the settings. Asked for once the
   * MCP servers are resolved, so a bad MCP config is the error named first.
   */
  readonly loop: () => LoopChoices;
  /** The flags as given. */
  readonly given: StartSettings;
  readonly reader: BatchFlagReader<F>;
  /** The environment and the notice lines (skipped files, the estimate's) for the user. */
  readonly host: {
    readonly env: Readonly<Record<string, string | undefined>>;
    readonly warn: (line: string) => void;
  };
}

/** R-X2: where a batch's model aliases resolve: the settings' `env` beneath the host's. */
function modelEnvOf(input: Pick<BatchPreparation<BatchHostFlags>, "environment" | "host">) {
  return { ...input.environment.settings.env, ...input.host.env };
}

/** A local batch ready for `runLocalBatch`. */
export interface PreparedLocalBatch {
  readonly plan: BatchPlan;
  /** A new batch's MCP servers, resolved before any state exists; a resume uses its own config. */
  readonly servers: ResolvedMcpServers | undefined;
  readonly bash: SubAgentBashOptions;
  /** A new batch's first requests (the dry run's answer, the budget's guess before any item settled). */
  readonly estimate: DryRunEstimate | undefined;
}

/**
 * R-A4: a local batch from its flags and its run environment — a new batch's MCP servers (R-M1:
 * a bad config fails before any state exists), the plan (`composeBatch`), a bypass mode the
 * settings disable refused, every item's Bash (R-S6: a batch runs unattended, so `auto`
 * sandboxes when it can; `on` without bubblewrap throws here), the skipped files said, and a new
 * batch's estimate. `stored`: the batch a local resume continues.
 */
export async function prepareLocalBatch<F extends BatchHostFlags>(
  input: BatchPreparation<F> & { readonly stored?: Parameters<typeof composeBatch>[0]["stored"] },
): Promise<BatchComposition<PreparedLocalBatch>> {
  const { flags, environment } = input;
  const servers =
    flags.resume === undefined
      ? await environment.mcpServers({ configFiles: flags["mcp-config"], strict: flags["strict-mcp-config"] })
      : undefined;
  const composed = await composeBatch({ ...input, loop: input.loop(), modelEnv: modelEnvOf(input) });
  if (!composed.ok) return composed;
  const plan = composed.value;
  refuseDisabledBypass(plan.spec.permissionMode, environment.settings);
  const bash = environment.bash(plan.spec.permissionMode, flags.sandbox, true);
  noteSkipped(plan, input.host.warn);
  const estimate =
    plan.kind === "new" ? await estimateNewBatch(plan, environment.settings, bash, input.host) : undefined;
  return { ok: true, value: { plan, servers, bash, estimate } };
}

/** A new `--queue` batch ready to enqueue: what workers read from Redis, and a dry run's estimate. */
export interface PreparedQueuedBatch {
  /** The plan without this host's MCP config files and start flags: workers use their own. */
  readonly plan: Extract<BatchPlan, { kind: "new" }>;
  /** The MCP servers its items may use, by name and transport only (R-M1, R-B1). */
  readonly mcpServers: readonly QueuedMcpServer[];
  /** This host's servers as resolved from the flags: the producer's reduce starts those named (R-M1). */
  readonly servers: ResolvedMcpServers;
  /** With `dryRun`: the first requests' estimate (the workers' sandbox is theirs; the prefix's tools are the same). */
  readonly estimate: DryRunEstimate | undefined;
}

/**
 * R-B1, R-M1: a new `--queue` batch from its flags — the MCP servers resolved as for a local batch
 * (a bad config fails now), but only their names go to Redis: each worker starts the servers of
 * those names from its own configuration, never a command line it read from the queue.
 */
export async function prepareQueuedBatch<F extends BatchHostFlags>(
  input: BatchPreparation<F> & { readonly dryRun: boolean },
): Promise<BatchComposition<PreparedQueuedBatch>> {
  const { flags, environment } = input;
  const { settings } = environment;
  const servers = await environment.mcpServers({
    configFiles: flags["mcp-config"],
    strict: flags["strict-mcp-config"],
  });
  const composed = await composeBatch({ ...input, loop: input.loop(), modelEnv: modelEnvOf(input) });
  if (!composed.ok) return composed;
  const planned = composed.value;
  refuseDisabledBypass(planned.spec.permissionMode, settings);
  if (planned.kind !== "new") throw new Error("composeBatch: a batch without --resume is new");
  noteSkipped(planned, input.host.warn);
  // Workers read a queued batch's settings from Redis: the flags as typed here are this host's.
  const { mcpConfig: _files, strictMcpConfig: _strict, startFlags: _flags, ...spec } = planned.spec;
  const plan = { ...planned, spec };
  const rules = environment.rules({ allow: spec.allowedTools, deny: spec.disallowedTools });
  const mcpServers = namedMcpServers(servers, rules.deny);
  if (!input.dryRun) return { ok: true, value: { plan, mcpServers, servers, estimate: undefined } };
  const bash = settings.env === undefined ? {} : { env: settings.env };
  const estimate = await estimateNewBatch(plan, settings, bash, input.host);
  return { ok: true, value: { plan, mcpServers, servers, estimate } };
}

/** The binary and unreadable matches that will not be items, said before anything runs. */
function noteSkipped(plan: BatchPlan, warn: (line: string) => void): void {
  if (plan.kind === "new" && plan.loaded.skipped.length > 0) warn(describeSkipped(plan.loaded.skipped));
}
