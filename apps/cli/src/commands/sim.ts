import { resolve } from "node:path";
import { loadModelsFile, MODELS_FILE_EXAMPLE, parseFaultsFlag } from "@forkloop/sdk/model-endpoint";
import {
  DEFAULT_RATE_LIMITS,
  loadScenario,
  parseBatchScript,
  parseRateLimitSpec,
  type Scenario,
  startSimulator,
} from "@forkloop/sim";
import { z } from "zod";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode } from "../exit-codes.js";
import { parseCommand } from "../flags.js";

/** Records `forkloop sim` keeps by default: enough for a test's inspection, bounded for long runs. */
const DEFAULT_RECORD_LIMIT = 10_000;

const SIM_USAGE = `Usage: forkloop sim [--port N] [--scenario FILE] [--faults SPEC] [--latency none|realistic] [--seed N]
                    [--models FILE] [--record-limit N] [--rate-limits SPEC]
                    [--batch-processing-ms N] [--batch-script SPEC]

Runs the forkloop simulator (an Anthropic-Messages-compatible server; its replies are simulated,
not from a real model) until Ctrl+C. Point any client at it with
ANTHROPIC_BASE_URL=<printed url> ANTHROPIC_API_KEY=<anything>.

  --port N            port on 127.0.0.1 (default 0 = a free port; the URL is printed)
  --scenario FILE     a scripted scenario (JSON); default the built-in policy brain
  --faults SPEC       fault injection, e.g. "429@1,529@2-3" or "random:seed=7,p429=0.1"
  --latency MODE      none (default) or realistic (time to first token + tokens/s)
  --seed N            seed of the deterministic replies (default 0)
  --models FILE       a JSON list of model specs that add to or override the known models, e.g.
                      ${MODELS_FILE_EXAMPLE}
  --record-limit N    request records kept for GET /_sim/requests, oldest dropped first
                      (default ${DEFAULT_RECORD_LIMIT}; each holds the raw request body)
  --rate-limits SPEC  per API key per minute, e.g. rpm=50,itpm=30000,otpm=8000 (requests, input
                      tokens, output tokens; defaults ${DEFAULT_RATE_LIMITS.requestsPerMinute} / ${DEFAULT_RATE_LIMITS.inputTokensPerMinute} / ${DEFAULT_RATE_LIMITS.outputTokensPerMinute});
                      every response carries the anthropic-ratelimit-* headers, a refusal is a 429
                      with retry-after
  --batch-processing-ms N
                      how long a Message Batch takes to process (default 1000; the API takes up
                      to 24 hours)
  --batch-script SPEC what happens to some Message Batches, counted from 1 in creation order:
                      expire@N[:after=K], cancel@N[:after=K] (K entries ran first), STATUS@N.E
                      (entry E of batch N errors, e.g. 529@1.2)`;

const simSchema = z.object({
  help: z.boolean().optional(),
  port: z
    .string()
    .regex(/^\d+$/, "must be a whole number, e.g. --port 8080 (0 picks a free port)")
    .transform(Number)
    .refine((port) => port <= 65_535, "must be at most 65535")
    .optional(),
  scenario: z.string().min(1, "give the path of a scenario JSON file").optional(),
  faults: z.string().min(1, 'give a fault spec, e.g. --faults "429@1,529@2"').optional(),
  latency: z
    .enum(["none", "realistic"], { message: "must be none or realistic, e.g. --latency realistic" })
    .optional(),
  seed: z.string().regex(/^\d+$/, "must be a whole number, e.g. --seed 7").transform(Number).optional(),
  models: z.string().min(1, "give the path of a models JSON file").optional(),
  "record-limit": z
    .string()
    .regex(/^\d+$/, "must be a whole number, e.g. --record-limit 1000")
    .transform(Number)
    .refine((limit) => limit >= 1, "must be at least 1")
    .optional(),
  "rate-limits": z
    .string()
    .transform((spec, ctx) => {
      const parsed = parseRateLimitSpec(spec);
      if (parsed.ok) return parsed.limits;
      ctx.addIssue({ code: "custom", message: parsed.error });
      return z.NEVER;
    })
    .optional(),
  "batch-processing-ms": z
    .string()
    .regex(/^\d+$/, "must be a whole number of milliseconds, e.g. --batch-processing-ms 500")
    .transform(Number)
    .optional(),
  "batch-script": z
    .string()
    .transform((spec, ctx) => {
      try {
        return parseBatchScript(spec);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
        return z.NEVER;
      }
    })
    .optional(),
});

export async function simCommand(argv: readonly string[], context: CommandContext): Promise<ExitCode> {
  const { flags, positionals } = parseCommand(
    {
      command: "sim",
      usage: SIM_USAGE,
      schema: simSchema,
      options: {
        help: { type: "boolean", short: "h" },
        port: { type: "string" },
        scenario: { type: "string" },
        faults: { type: "string" },
        latency: { type: "string" },
        seed: { type: "string" },
        models: { type: "string" },
        "record-limit": { type: "string" },
        "rate-limits": { type: "string" },
        "batch-processing-ms": { type: "string" },
        "batch-script": { type: "string" },
      },
    },
    argv,
  );
  if (flags.help) {
    context.stdout.write(`${SIM_USAGE}\n`);
    return EXIT.ok;
  }
  if (positionals.length > 0) {
    throw new CliError(`forkloop sim takes no arguments (got "${positionals.join(" ")}").\n\n${SIM_USAGE}`);
  }
  const faults = flags.faults === undefined ? undefined : parseFaultsFlag(flags.faults);
  const scenario =
    flags.scenario === undefined ? undefined : await loadScenarioFlag(flags.scenario, context.cwd);
  const models =
    flags.models === undefined ? [] : await loadModelsFile(flags.models, "--models", context.cwd);
  const simulator = await startSimulator({
    port: flags.port ?? 0,
    latency: flags.latency ?? "none",
    seed: flags.seed ?? 0,
    recordLimit: flags["record-limit"] ?? DEFAULT_RECORD_LIMIT,
    ...(flags["rate-limits"] === undefined ? {} : { rateLimits: flags["rate-limits"] }),
    ...(models.length === 0 ? {} : { models }),
    ...(faults === undefined ? {} : { faults }),
    ...(scenario === undefined ? {} : { scenario }),
    batches: {
      ...(flags["batch-processing-ms"] === undefined ? {} : { processingMs: flags["batch-processing-ms"] }),
      ...(flags["batch-script"] === undefined ? {} : { script: flags["batch-script"] }),
    },
  });
  // The first stdout line is the URL, so scripts (and the e2e tests) can read where it listens.
  context.stdout.write(`${simulator.url}\n`);
  context.stderr.write(
    `forkloop sim: simulator listening on ${simulator.url} (replies are simulated, not from a real model). Ctrl+C stops it.\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    context.signal.addEventListener("abort", stop, { once: true });
  });
  await simulator.close();
  return EXIT.ok;
}

async function loadScenarioFlag(path: string, cwd: string): Promise<Scenario> {
  try {
    return await loadScenario(resolve(cwd, path));
  } catch (error) {
    throw new CliError(`--scenario ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}
