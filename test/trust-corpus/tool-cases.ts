import { join } from "node:path";
import type { Options } from "@forkloop/sdk";
import type { Scenario } from "@forkloop/sim";
import type { CorpusCase, Surface, Through } from "./corpus.js";
import {
  type Agent,
  batchArgs,
  type Mode,
  modeFlags,
  modeOptions,
  runCliAgainst,
  runQueryAgainst,
  type Seen,
  scenarioFor,
  type ToolCall,
} from "./drive.js";

/**
 * Cases that are tool calls a prompt-injected model asks for: each gives its call and judges its
 * effect on the world it was planted in. A surface plants one world and has one agent (main,
 * `Agent` sub-agent or batch item) ask for every call in one turn.
 */
export interface ToolCase<World> extends CorpusCase {
  /** The call; its id is made from the case id. */
  readonly call: (world: World) => { readonly name: string; readonly input: Record<string, unknown> };
  /** The effect that shows it got through, or undefined. */
  readonly through: (world: World, seen: Seen) => string | undefined;
  /** Calls made a turn earlier (a Read before an Edit, which refuses files not yet read). */
  readonly before?: (
    world: World,
  ) => readonly { readonly name: string; readonly input: Record<string, unknown> }[];
  /** Only these agents ask for it (default all). */
  readonly agents?: readonly Agent[];
}

export const toolUseId = (id: string) => `toolu_${id.replace(/[^A-Za-z0-9_]/g, "_")}`;

export function callsFor<World>(cases: readonly ToolCase<World>[], world: World): ToolCall[] {
  return cases.flatMap((entry) => [
    ...(entry.before?.(world) ?? []).map((call, index) => ({
      id: `${toolUseId(entry.id)}_before_${index}`,
      ...call,
    })),
    { id: toolUseId(entry.id), ...entry.call(world) },
  ]);
}

export interface ToolWorld {
  readonly cwd: string;
  readonly home: string;
  /** Extra environment for the run (e.g. SSH_AUTH_SOCK). */
  readonly env?: Record<string, string>;
}

/** How one surface runs the calls: through the CLI (run or batch) or query(). */
export type ToolDriver =
  | {
      readonly kind: "run";
      readonly mode: Mode;
      readonly flags?: readonly string[];
      /** The built binary, for what only its own process shows (its HOME, its environment). */
      readonly spawn?: true;
      /** No --permission-mode flag: the mode is what settings make of `mode` (the default). */
      readonly noModeFlag?: true;
    }
  | { readonly kind: "batch"; readonly flags?: readonly string[] }
  | { readonly kind: "query"; readonly mode: Mode; readonly options?: Options };

export function driverLabel(driver: ToolDriver, agent: Agent): string {
  const who = agent === "main" ? "main agent" : agent === "sub" ? "an Agent sub-agent" : "a batch item";
  switch (driver.kind) {
    case "run":
      return `${driver.spawn ? "the built binary, " : ""}forkloop run ${driver.noModeFlag ? "(no --permission-mode)" : `--permission-mode ${driver.mode}`}${driver.flags?.length ? ` ${driver.flags.join(" ")}` : ""}, ${who}`;
    case "batch":
      return `forkloop batch${driver.flags?.length ? ` ${driver.flags.join(" ")}` : ""}, ${who}`;
    case "query":
      return `query() from @forkloop/sdk, ${driver.mode}${driver.options?.sandbox ? `, sandbox ${driver.options.sandbox}` : ""}, ${who}`;
  }
}

/**
 * A Message Batch entry (`batch --api batches`) carries no query-source header, so its rules match
 * any request: a batch item's requests are the only ones the run makes.
 */
function messageBatchEntries(driver: ToolDriver, scenario: Scenario): Scenario {
  if (driver.kind !== "batch" || !driver.flags?.includes("--api")) return scenario;
  return {
    ...scenario,
    rules: scenario.rules.map(({ match: { querySource: _source, ...match }, ...rule }) => ({
      ...rule,
      match,
    })),
  };
}

/** Runs `calls` as `agent` through `driver` in `world`. */
export function runCalls(
  driver: ToolDriver,
  agent: Agent,
  world: ToolWorld,
  calls: readonly ToolCall[],
  itemsDir: string,
  watchdogMs?: number,
  agentInput?: Record<string, unknown>,
): Promise<Seen> {
  const options = {
    cwd: world.cwd,
    home: world.home,
    scenario: messageBatchEntries(driver, scenarioFor(agent, calls, 1, agentInput)),
    ...(world.env === undefined ? {} : { env: world.env }),
    ...(watchdogMs === undefined ? {} : { watchdogMs }),
  };
  switch (driver.kind) {
    case "run":
      return runCliAgainst(
        [
          "run",
          "Do the task.",
          "--output-format",
          "json",
          "--max-turns",
          "4",
          ...(driver.noModeFlag ? [] : modeFlags(driver.mode)),
          ...(driver.flags ?? []),
        ],
        driver.spawn ? { ...options, spawn: true } : options,
      );
    case "batch":
      return runCliAgainst(batchArgs(itemsDir, 1, ["--max-turns", "4", ...(driver.flags ?? [])]), options);
    case "query":
      return runQueryAgainst({ maxTurns: 4, ...modeOptions(driver.mode), ...driver.options }, options);
  }
}

/** Every call was answered (the model got its tool_result), so a hold is the protection's, not a skipped call. */
export function unanswered(calls: readonly ToolCall[], seen: Seen): Through[] {
  return calls
    .filter((call) => !seen.requests.includes(`"tool_use_id":"${call.id}"`))
    .map((call) => ({
      id: "harness",
      effect: `${call.id} got no tool_result (exit ${seen.code}): ${seen.stderr.slice(-400)}`,
    }));
}

/**
 * A surface: plants a world with `plant`, has `agent` ask for every case's call through `driver`,
 * then judges each case on that world.
 */
export function toolSurface<World extends ToolWorld>(options: {
  readonly cases: readonly ToolCase<World>[];
  readonly plant: (dir: string) => World | Promise<World>;
  readonly driver: ToolDriver;
  readonly agent: Agent;
  readonly label?: string;
  readonly cleanup?: (world: World) => void | Promise<void>;
  readonly watchdogMs?: number;
  /**
   * A run that refuses to start (exit 2, or query() throwing, nothing sent) holds: refusing
   * settings it cannot honour is the fail-fast policy, not a skipped call.
   */
  readonly refusalHolds?: boolean;
  /** Added to a sub-agent's `Agent` call (`{ isolation: "worktree" }`). */
  readonly agentInput?: Record<string, unknown>;
}): Surface {
  return {
    label: options.label ?? driverLabel(options.driver, options.agent),
    async run(dir) {
      const world = await options.plant(dir);
      try {
        const cases = options.cases.filter(
          (entry) => entry.agents === undefined || entry.agents.includes(options.agent),
        );
        const calls = callsFor(cases, world);
        const seen = await runCalls(
          options.driver,
          options.agent,
          world,
          calls,
          join(dir, "items"),
          options.watchdogMs,
          options.agentInput,
        );
        const refused =
          options.refusalHolds === true && seen.code !== 0 && !seen.hung && seen.requestCount === 0;
        const through: Through[] = refused ? [] : [...unanswered(calls, seen)];
        for (const entry of cases) {
          const effect = entry.through(world, seen);
          if (effect !== undefined) through.push({ id: entry.id, effect });
        }
        return through;
      } finally {
        await options.cleanup?.(world);
      }
    },
  };
}
