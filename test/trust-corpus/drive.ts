import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCliInProcess, startCli } from "@forkloop/cli/testing";
import { AbortError, ErrorResultError, type Options, query, type SDKMessage } from "@forkloop/sdk";
import { type Scenario, type Simulator, startSimulator } from "@forkloop/sim";
import { CREDENTIAL_ENV } from "./places.js";

/**
 * How the corpus drives forkloop: the CLI (`forkloop run`, `batch`, `sessions`, `replay`) in this
 * process through `runCliInProcess` — the same commands, flags, output and exit codes as the
 * binary — or the BUILT binary as a child process where the process is the subject (a hang that
 * would stop this one, a signal, the credentials in the process's own environment), or `query()`
 * from `@forkloop/sdk` in this process; each against a simulator started here on a scripted
 * scenario. What comes back is what a case judges: the exit, the output bytes and every request
 * body the simulator recorded.
 */

export type Mode = "default" | "dontAsk" | "plan" | "acceptEdits" | "bypassPermissions";
export const MODES: readonly Mode[] = ["default", "dontAsk", "plan", "acceptEdits", "bypassPermissions"];

/** Who makes a case's tool calls: the main agent, an `Agent` sub-agent, or a batch item. */
export type Agent = "main" | "sub" | "batch";

export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly input: Record<string, unknown>;
  /** Asked for a turn earlier than the rest (a Read an Edit needs: Edit refuses files not yet read). */
  readonly first?: true;
}

/** What one run left for the cases to judge. */
export interface Seen {
  /** Exit code (CLI) or 0 when `query()` ended with a result; null when the watchdog ended it. */
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Every request body the simulator recorded, joined. */
  readonly requests: string;
  readonly requestCount: number;
  /** The watchdog had to end the run (a hang). */
  readonly hung: boolean;
}

/**
 * Far above any run's time on a loaded CI machine: the watchdog only turns a hang into a failure
 * (cases about hangs set their own).
 */
const DEFAULT_WATCHDOG_MS = 240_000;

/** The text the scripted model answers with once its calls are made. */
const DONE = "done (scripted by the simulator)";

/** How the simulator sees a general-purpose sub-agent's requests. */
const SUB_SOURCE = "agent:general-purpose";

/** The main agent's call that starts the sub-agent. */
const AGENT_CALL = {
  type: "tool_use" as const,
  id: "toolu_corpus_agent",
  name: "Agent",
  input: { description: "corpus", prompt: "Do the corpus task." },
};

/**
 * A scenario in which `agent`'s first turn asks for every call at once (the `first` calls a turn
 * before). For a sub-agent the main agent's first turn starts one `Agent`; for a batch item each
 * item's first request gets them. Rules with `times` run out in order, so a sub-agent's or item's
 * turns follow one another. `agentInput` adds to the sub-agent's `Agent` call (`isolation` …).
 */
export function scenarioFor(
  agent: Agent,
  calls: readonly ToolCall[],
  items = 1,
  agentInput: Record<string, unknown> = {},
): Scenario {
  const reply = (list: readonly ToolCall[]) => ({
    content: list.map(({ first: _first, ...call }) => ({ type: "tool_use" as const, ...call })),
  });
  const first = calls.filter((call) => call.first);
  const rest = calls.filter((call) => !call.first);
  const turns = first.length > 0 ? [reply(first), reply(rest)] : [reply(rest)];
  const source = agent === "main" ? "sdk" : agent === "sub" ? SUB_SOURCE : "batch";
  const rules: Scenario["rules"] =
    agent === "main"
      ? turns.map((turn, index) => ({ match: { turn: index, querySource: source }, reply: turn }))
      : turns.map((turn) => ({ match: { querySource: source }, reply: turn, times: items }));
  if (agent === "sub")
    rules.push({
      match: { turn: 0, querySource: "sdk" },
      reply: { content: [{ ...AGENT_CALL, input: { ...AGENT_CALL.input, ...agentInput } }] },
    });
  return { rules, fallback: { content: [{ type: "text", text: DONE }] } };
}

/**
 * The main agent and an `Agent` sub-agent both ask for every call (the sub-agent's ids suffixed
 * `_sub`): the main agent's first turn holds the calls and the `Agent` call, the sub-agent's
 * first turn the calls again.
 */
export function scenarioForMainAndSub(calls: readonly ToolCall[]): Scenario {
  const uses = (suffix: string) =>
    calls.map(({ first: _first, ...call }) => ({
      type: "tool_use" as const,
      ...call,
      id: `${call.id}${suffix}`,
    }));
  return {
    rules: [
      { match: { querySource: SUB_SOURCE }, reply: { content: uses("_sub") }, times: 1 },
      { match: { turn: 0, querySource: "sdk" }, reply: { content: [...uses(""), AGENT_CALL] } },
    ],
    fallback: { content: [{ type: "text", text: DONE }] },
  };
}

/** A scenario that only answers text: for attacks that need no tool call (session start). */
export const TEXT_ONLY: Scenario = {
  rules: [{ match: {}, reply: { content: [{ type: "text", text: DONE }] } }],
};

export interface RunOptions {
  /** Spawn the built CLI instead of running it in this process (the process is the subject). */
  readonly spawn?: true;
  /** In this process only: false shows the views' output unescaped (the terminal cases' control). */
  readonly terminalViews?: false;
  /** The project directory. */
  readonly cwd: string;
  /** The user's home (never the workspace unless the case is about that). */
  readonly home: string;
  readonly scenario: Scenario;
  /** Extra environment (added after the credentials and the endpoint). */
  readonly env?: Record<string, string>;
  /** Ended with SIGKILL (CLI) or an abort (query) after this long: a hang, not a slow run. */
  readonly watchdogMs?: number;
}

async function withSim<T>(scenario: Scenario, body: (sim: Simulator) => Promise<T>): Promise<T> {
  const sim = await startSimulator({ scenario });
  try {
    return await body(sim);
  } finally {
    await sim.close();
  }
}

let dumps = 0;

function bodies(sim: Simulator): { requests: string; requestCount: number } {
  // A Message Batch entry (`--api batches`) is recorded as `/v1/messages/batches/{id}#{custom_id}`.
  const records = sim
    .requests()
    .filter(
      (record) => record.path === "/v1/messages" || /^\/v1\/messages\/batches\/[^/]+#/.test(record.path),
    );
  const requests = records.map((record) => record.rawBody).join("\n");
  // `TRUST_CORPUS_DUMP=DIR` keeps every run's request bodies, for writing up a hole.
  const dump = process.env.TRUST_CORPUS_DUMP;
  if (dump) {
    mkdirSync(dump, { recursive: true });
    writeFileSync(join(dump, `${process.pid}-${++dumps}-requests.json`), requests);
  }
  return { requests, requestCount: records.length };
}

/** The environment a CLI run gets: the model credentials planted, the simulator's URL, HOME. */
function cliEnvironment(options: RunOptions, url: string): Record<string, string> {
  return { ...CREDENTIAL_ENV, ANTHROPIC_BASE_URL: url, HOME: options.home, ...options.env };
}

/** Runs the CLI with `args` in `options.cwd` against a simulator on `options.scenario`. */
export function runCliAgainst(args: readonly string[], options: RunOptions): Promise<Seen> {
  return withSim(options.scenario, async (sim) => {
    let hung = false;
    const env = cliEnvironment(options, sim.url);
    const watchdogMs = options.watchdogMs ?? DEFAULT_WATCHDOG_MS;
    if (options.spawn) {
      const cli = startCli(args, { cwd: options.cwd, env });
      const watchdog = setTimeout(() => {
        hung = true;
        cli.child.kill("SIGKILL");
      }, watchdogMs);
      const result = await cli.exited.finally(() => clearTimeout(watchdog));
      return { code: result.code, stdout: result.stdout, stderr: result.stderr, hung, ...bodies(sim) };
    }
    // In this process a hang can only be asked to stop (as Ctrl+C does): cases whose protection
    // is against hangs spawn the binary instead.
    const stop = new AbortController();
    const watchdog = setTimeout(() => {
      hung = true;
      stop.abort();
    }, watchdogMs);
    const result = await runCliInProcess(args, {
      cwd: options.cwd,
      env,
      signal: stop.signal,
      ...(options.terminalViews === false ? { terminalViews: false } : {}),
    }).finally(() => clearTimeout(watchdog));
    return { code: result.code, stdout: result.stdout, stderr: result.stderr, hung, ...bodies(sim) };
  });
}

/** Starts the built CLI against a simulator already running at `url` (for tests that signal it). */
export function startCliAgainst(
  args: readonly string[],
  where: { readonly cwd: string; readonly home: string; readonly env?: Record<string, string> },
  url: string,
) {
  return startCli(args, {
    cwd: where.cwd,
    env: { ...CREDENTIAL_ENV, ANTHROPIC_BASE_URL: url, HOME: where.home, ...where.env },
  });
}

/** `forkloop run` flags for a mode (bypassPermissions by its flag, as a user types it). */
export function modeFlags(mode: Mode): string[] {
  return ["--permission-mode", mode];
}

/**
 * `forkloop batch` over `items` items ("item 1" …) whose items file lives outside the project.
 * `--dry-run` among `flags` lists and estimates without sending.
 */
export function batchArgs(itemsDir: string, items: number, flags: readonly string[]): string[] {
  mkdirSync(itemsDir, { recursive: true });
  const file = join(itemsDir, "items.jsonl");
  writeFileSync(
    file,
    `${Array.from({ length: items }, (_, index) => JSON.stringify(`item ${index + 1}`)).join("\n")}\n`,
  );
  // In place (--no-isolate): the attacks aim at the project itself, the surface an isolated item
  // only reaches through its apply (R-B2, R-B4 tested apart) — unless `flags` ask for --isolate.
  const isolation = flags.includes("--isolate") ? [] : ["--no-isolate"];
  return ["batch", "--items", file, "--prompt", "Do {{item}}", "--id", "corpus", ...isolation, ...flags];
}

/**
 * Runs `query()` in this process against a simulator on `options.scenario`. The model credentials
 * go in through `env`, as a program passes them.
 */
export function runQueryAgainst(
  queryOptions: Options,
  options: RunOptions,
  prompt = "Do the task.",
): Promise<Seen> {
  return withSim(options.scenario, async (sim) => {
    const stderr: string[] = [];
    const abortController = new AbortController();
    let hung = false;
    const watchdog = setTimeout(() => {
      hung = true;
      abortController.abort();
    }, options.watchdogMs ?? DEFAULT_WATCHDOG_MS);
    const messages: SDKMessage[] = [];
    let failure = "";
    try {
      for await (const message of query({
        prompt,
        options: {
          cwd: options.cwd,
          env: {
            ...CREDENTIAL_ENV,
            ANTHROPIC_BASE_URL: sim.url,
            HOME: options.home,
            PATH: process.env.PATH ?? "",
            ...options.env,
          },
          stderr: (line) => stderr.push(line),
          abortController,
          ...queryOptions,
        },
      }))
        messages.push(message);
    } catch (error) {
      // A query ends on an error result, or after the watchdog's abort, by throwing, as the Agent
      // SDK's does: its result is in already.
      const ended =
        error instanceof ErrorResultError || (error instanceof AbortError && abortController.signal.aborted);
      if (!ended) {
        failure = error instanceof Error ? (error.stack ?? error.message) : String(error);
      }
    } finally {
      clearTimeout(watchdog);
    }
    const result = messages.at(-1);
    return {
      code: failure === "" && result?.type === "result" ? 0 : 1,
      stdout: messages.map((message) => JSON.stringify(message)).join("\n"),
      stderr: `${stderr.join("\n")}${failure}`,
      hung,
      ...bodies(sim),
    };
  });
}

/** query() options for a mode (bypassPermissions needs the Agent SDK's explicit opt-in). */
export function modeOptions(mode: Mode): Options {
  return mode === "bypassPermissions"
    ? { permissionMode: mode, allowDangerouslySkipPermissions: true }
    : { permissionMode: mode };
}

/** A run that did not end well proves nothing: reported as a harness failure, never as a hold. */
export function ranCheck(seen: Seen, requests = 1): { id: string; effect: string }[] {
  if (seen.code === 0 && seen.requestCount >= requests) return [];
  return [{ id: "harness", effect: `the run itself failed (exit ${seen.code}): ${seen.stderr.slice(-600)}` }];
}
