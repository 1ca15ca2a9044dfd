import { BATCH_DEFAULT_MODEL, type BatchFlagReader, MAX_BATCH_TURNS } from "@forkloop/batch";
import { jsonSchemaFlag, mcpConfigFlag } from "@forkloop/sdk/internal";
import { z } from "zod";
import { budgetUsdSchema, modeSchema, toolListSchema } from "../agent-options.js";
import { checkFlagValues, type GivenFlags, type ParsedCommand, parseCommand } from "../flags.js";
import { LOOP_FLAG_OPTIONS, LOOP_FLAGS_USAGE, loopFlagsSchema } from "../loop-flags.js";
import { spreadMcpConfigArgs } from "../mcp-config-args.js";
import { TIMEOUT_FLAG_OPTIONS, TIMEOUT_FLAG_SCHEMAS, TIMEOUT_FLAGS_USAGE } from "../model-timeouts.js";
import { sandboxFlagSchema } from "../sandbox-flag.js";

export const BATCH_USAGE = `Usage: forkloop batch (--files GLOB | --items FILE.jsonl) --prompt TEMPLATE [flags]
       forkloop batch --resume ID [--retry-failed | --retry-conflicts] [--repair] [any setting flag: --concurrency N, --max-budget-usd N …]
       forkloop batch (--files GLOB | --items FILE.jsonl) --prompt TEMPLATE --queue URL [--attempts N]
       forkloop batch --resume ID --queue URL [--output DIR]
       forkloop batch list | status ID      the batches of this project; one batch's progress

Runs one sub-agent per item in a worker pool. Items share one cache-safe prompt prefix, and the
first item warms the prompt cache before the rest start. Progress goes to stderr; results
(results.jsonl, report.json, report.md: every item's answer and metrics) to the batch's output
directory and a summary to stdout.

  --files GLOB          one item per matching file (relative to --cwd; .gitignore respected;
                        binary and unreadable files are skipped and listed)
  --items FILE          one item per line of a JSONL file (an "id" field labels the item)
  --prompt TEMPLATE     the prompt; {{file}} (with --files) or {{item}} / {{item.key}} (with --items)
  --dry-run             list the items and estimate the first requests' tokens and cost; send nothing
  --max-budget-usd N    start no item once the batch's spend (this run and earlier ones) would pass N
  --output-format F     text (default) | json: the summary on stdout as one JSON object
  --concurrency N       items running at once (default 8, at most 256)
  --resume ID           continue an interrupted batch with every setting it started with (kept in
                        batch.json; a setting flag given here replaces it, said once): finished
                        items are skipped, interrupted ones redone; a finished batch runs nothing
  --retry-failed        with --resume: run the failed items again too
  --retry-conflicts     with --resume: run the items whose change was a conflict again, on the tree
                        as it is now (the changes applied since included), and merge them; other
                        items are left as they are (with --queue: on the workers, merged here)
  --repair              with --resume: a damaged journal keeps every readable record (the damaged
                        file is moved aside); items it no longer knows are listed again and run
  --id ID               name a new batch (default: b-<date>-<random>)
  --model NAME          model id or alias (default ${BATCH_DEFAULT_MODEL})
  --fallback-model NAME model to switch to when the primary stays overloaded (repeatable)
  --max-turns N         turns per item (default 8)
  --allowed-tools LIST  allow rules, comma-separated: Edit, Bash(npm test:*), Write(src/**) …
  --disallowed-tools LIST  deny rules; a bare tool name also removes the tool (e.g. Bash, mcp__db,
                        or Agent / Task / Skill: no sub-agents)
  --mcp-config FILE…    MCP servers from files (or JSON) {"mcpServers": {…}}, several after one flag
                        (*.json or {…}) or the flag repeated; with
                        .mcp.json (trusted projects) and settings' mcpServers, started once for all items
  --strict-mcp-config   only the --mcp-config servers
  --trust-project          use this project's own settings as they are (see forkloop trust)
  --sandbox MODE        each item's Bash in bubblewrap: auto | on | off (default auto: sandboxed
                        when bubblewrap works here, said once on stderr when it does not)
  --permission-mode M   default | acceptEdits | plan | bypassPermissions | dontAsk | auto (default
                        dontAsk: reads run, anything that would ask for permission is denied)
  --append-system-prompt TEXT  added to the shared system prompt
${LOOP_FLAGS_USAGE}
  --output DIR          where results.jsonl and the report go (default: the batch's state directory)
  --cwd DIR             the project to work in (default: the current directory)
  --state-dir DIR       keep the batch state there (default $FORKLOOP_HOME/projects/<project>/,
                        FORKLOOP_HOME defaulting to ~/.forkloop; batches in <cwd>/.forkloop are
                        used only when forkloop made them)
  --no-warm             start the whole first wave at once (no cache warming; for comparisons)
  --isolate             each item works in its own copy of the project: a git worktree of the last
                        commit (the tree must be clean), or a copy outside git; a succeeded item's
                        change is merged into the tree once, under a lock, journaled (a kill -9
                        mid-apply is finished on --resume); an overlapping change is a conflict
                        (its diff kept, listed in the report). On by default when the permissions
                        let items edit (acceptEdits, bypassPermissions, auto, or an Edit/Write/Bash
                        allow rule), said once; with --queue only when given (workers isolate
                        items at the producer's last commit, the producer applies each change)
  --no-isolate          items edit the project in place
  --json-schema SCHEMA  a JSON Schema (a file or the JSON itself; type "object"): every item's final
                        answer is JSON for it (structured outputs), validated, and stored parsed as
                        structured_output in results.jsonl; an answer that does not match fails
                        the item with the reason (with --queue: each worker checks it; kept with
                        the batch on re-attach)
  --reduce PROMPT       after the map, one agent runs PROMPT over the succeeded items' results
                        (their structured_output with --json-schema) and its answer is the batch's
                        result: printed, in report.json / report.md and \`batch status\`. It reuses
                        the items' cached prefix; journaled (reduce.json), so a resume after the
                        map runs the reduce alone; kept with the batch, and run again when a resume
                        changes its input (--retry-failed, another --reduce); with --queue the
                        producer runs it once every item is settled (journaled in Redis too)
  --queue URL           distribute the batch over Redis (redis://HOST:PORT[/DB]): \`forkloop worker
                        --queue URL\` processes on any host run the items; this one shows progress
                        and writes the results (see the @forkloop/batch README for Redis settings);
                        --dry-run and --output-format json work with it, --max-budget-usd does not
  --attempts N          with --queue: runs per item before it counts as failed (default 3)
  --retry-delay MS      with --queue: the first retry's delay, doubled per attempt (default 1000)
  --rpm N               at most N model requests per minute (each turn, retry and compaction is a
                        request); with --queue across every worker on every host. Kept with the
                        batch; a local batch's --resume ID --rpm M replaces it
  --api API             messages (default): each model request online | batches: each round of
                        requests (every running item's next one) as a Message Batch, at half the
                        price and up to 24 hours a round; tools run here between rounds; a resume
                        polls the batches a stopped run sent (FORKLOOP_BATCH_POLL_MS, default
                        30000; FORKLOOP_BATCH_ROUND_WAIT_MS, the longest a round waits for items
                        still running tools, default 10000). Kept with the batch
  --report              also write the HTML report (report.html) and print its path; without it
                        the command that writes and opens it is printed
${TIMEOUT_FLAGS_USAGE}

State: <state dir>/batches/<id>/ (batch.json, journal.log). Exit codes: 0 every item
succeeded, 6 some failed, 7 none succeeded, 10 stopped at --max-budget-usd (resume with a higher
one), 130 interrupted, 143 SIGTERM, 129 SIGHUP and 131 SIGQUIT (resume it), 2 bad flags or
input, or the first item showed the endpoint, key or model is wrong (fix, then resume).`;

const count = (flag: string, example: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `must be a whole number, e.g. --${flag} ${example}`)
    .transform(Number)
    .refine((value) => value >= 1 && value <= max, `must be between 1 and ${max}`);

const schema = z.object({
  help: z.boolean().optional(),
  files: z.string().min(1, 'give a glob, e.g. --files "src/**/*.ts"').optional(),
  items: z.string().min(1, "give a JSONL file, e.g. --items tasks.jsonl").optional(),
  prompt: z.string().min(1, 'give a prompt, e.g. --prompt "Summarize {{file}}"').optional(),
  "dry-run": z.boolean().optional(),
  "max-budget-usd": budgetUsdSchema.optional(),
  "output-format": z.enum(["text", "json"], { message: "must be text or json" }).optional(),
  concurrency: count("concurrency", 8, 256).optional(),
  resume: z.string().min(1).optional(),
  id: z.string().min(1).optional(),
  model: z.string().min(1, "give a model id, e.g. --model claude-sonnet-4-6").optional(),
  "fallback-model": z.array(z.string().min(1)).optional(),
  "max-turns": count("max-turns", 8, MAX_BATCH_TURNS).optional(),
  "allowed-tools": toolListSchema.optional(),
  "disallowed-tools": toolListSchema.optional(),
  "mcp-config": z.array(z.string().min(1, "give a file, e.g. --mcp-config mcp.json")).optional(),
  "strict-mcp-config": z.boolean().optional(),
  "trust-project": z.boolean().optional(),
  sandbox: sandboxFlagSchema.optional(),
  "permission-mode": modeSchema.optional(),
  "append-system-prompt": z.string().optional(),
  output: z.string().min(1).optional(),
  cwd: z.string().min(1).optional(),
  "state-dir": z.string().min(1, "give a directory, e.g. --state-dir ~/forkloop-state").optional(),
  "no-warm": z.boolean().optional(),
  isolate: z.boolean().optional(),
  "no-isolate": z.boolean().optional(),
  "json-schema": z.string().min(1, 'give a JSON Schema, e.g. --json-schema \'{"type":"object"}\'').optional(),
  reduce: z
    .string()
    .refine((value) => value.trim() !== "", 'give a prompt, e.g. --reduce "Summarise the findings"')
    .optional(),
  "retry-failed": z.boolean().optional(),
  "retry-conflicts": z.boolean().optional(),
  report: z.boolean().optional(),
  repair: z.boolean().optional(),
  queue: z.string().min(1, "give a Redis URL, e.g. --queue redis://127.0.0.1:6379").optional(),
  attempts: count("attempts", 3, 100).optional(),
  "retry-delay": z
    .string()
    .regex(/^\d+$/, "must be milliseconds, e.g. --retry-delay 1000")
    .transform(Number)
    .optional(),
  rpm: count("rpm", 60, 1_000_000).optional(),
  api: z
    .enum(["messages", "batches"], { message: "must be messages or batches, e.g. --api batches" })
    .optional(),
  ...TIMEOUT_FLAG_SCHEMAS,
  ...loopFlagsSchema,
});
export type BatchFlags = z.infer<typeof schema>;

/** Flag values (stored settings with the resume's own flags over them) checked as `forkloop batch` checks its argv. */
function checkBatchFlagValues(values: GivenFlags): BatchFlags {
  return checkFlagValues({ command: "batch", schema }, values);
}

/** How a batch composition reads this command's flags again (a resume's stored start settings, R-R7). */
export const BATCH_FLAG_READER: BatchFlagReader<BatchFlags> = {
  check: checkBatchFlagValues,
  jsonSchema: jsonSchemaFlag,
  mcpConfig: mcpConfigFlag,
  loopFlags: Object.keys(LOOP_FLAG_OPTIONS),
};

export function parseBatchFlags(argv: readonly string[]): ParsedCommand<BatchFlags> {
  return parseCommand(
    {
      command: "batch",
      usage: BATCH_USAGE,
      schema,
      options: {
        help: { type: "boolean", short: "h" },
        files: { type: "string" },
        items: { type: "string" },
        prompt: { type: "string" },
        "dry-run": { type: "boolean" },
        "max-budget-usd": { type: "string" },
        "output-format": { type: "string" },
        concurrency: { type: "string" },
        resume: { type: "string" },
        id: { type: "string" },
        model: { type: "string" },
        "fallback-model": { type: "string", multiple: true },
        "max-turns": { type: "string" },
        "allowed-tools": { type: "string" },
        "disallowed-tools": { type: "string" },
        "mcp-config": { type: "string", multiple: true },
        "strict-mcp-config": { type: "boolean" },
        "trust-project": { type: "boolean" },
        sandbox: { type: "string" },
        "permission-mode": { type: "string" },
        "append-system-prompt": { type: "string" },
        output: { type: "string" },
        cwd: { type: "string" },
        "state-dir": { type: "string" },
        "no-warm": { type: "boolean" },
        isolate: { type: "boolean" },
        "no-isolate": { type: "boolean" },
        "json-schema": { type: "string" },
        reduce: { type: "string" },
        "retry-failed": { type: "boolean" },
        "retry-conflicts": { type: "boolean" },
        report: { type: "boolean" },
        repair: { type: "boolean" },
        queue: { type: "string" },
        attempts: { type: "string" },
        "retry-delay": { type: "string" },
        rpm: { type: "string" },
        api: { type: "string" },
        ...TIMEOUT_FLAG_OPTIONS,
        ...LOOP_FLAG_OPTIONS,
      },
    },
    spreadMcpConfigArgs(argv),
  );
}
