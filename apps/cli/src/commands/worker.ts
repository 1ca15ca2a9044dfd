import { resolve } from "node:path";
import { parseQueueUrl, plural, startQueueService } from "@forkloop/batch";
import { describeWorkerEvent, workerPolicyNotice } from "@forkloop/batch/internal";
import { checkProjectDir, projectState } from "@forkloop/sdk";
import { mcpConfigFlag } from "@forkloop/sdk/internal";
import { z } from "zod";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode } from "../exit-codes.js";
import { parseCommand } from "../flags.js";
import { spreadMcpConfigArgs } from "../mcp-config-args.js";
import { sandboxFlagSchema } from "../sandbox-flag.js";

const WORKER_USAGE = `Usage: forkloop worker --queue redis://HOST:PORT[/DB] [--concurrency N] [flags]

Runs the items of every batch enqueued with \`forkloop batch --queue URL\` on the same Redis, as
sub-agents in this process's worker pool, until stopped. Start one per host (or several); each
warms the batch's shared prompt prefix on its host first. SIGTERM or Ctrl+C stops taking items
and finishes the running ones; a second one exits at once (its items run again elsewhere once
their lock expires).

  --queue URL              the Redis the batches are on
  --concurrency N          items running at once in this process (default 8, at most 256)
  --cwd DIR                the project the items work in on this host (default: the current directory)
  --state-dir DIR          keep the transcripts there (default $FORKLOOP_HOME/projects/<project>/,
                           FORKLOOP_HOME defaulting to ~/.forkloop)
  --trust-project          use this project's own settings as they are (see forkloop trust)
  --sandbox MODE           each item's Bash in bubblewrap: auto | on | off (default auto: sandboxed
                           when bubblewrap works on this host); a batch cannot change it
  --mcp-config FILE…       MCP servers from files (or JSON) {"mcpServers": {…}}, several after one
                           flag (*.json or {…}) or the flag repeated; with
                           .mcp.json (trusted projects) and settings' mcpServers
  --strict-mcp-config      only the --mcp-config servers
  --allow-dangerously-skip-permissions
                           also run batches enqueued with --permission-mode bypassPermissions
                           (their tool calls run unasked; this host's deny rules and sandbox still
                           hold). Without it their items fail, naming this flag
  --lock-duration MS       how long a running item's lock lasts unrenewed (default 30000); after a
                           crash (kill -9) its items run again once it expires
  --stalled-interval MS    how often this worker checks for such items (default 30000)

MCP servers: a batch names the servers its items may use (never their commands); this worker
starts a server of that name from its own configuration above, the first time a batch needs it,
and shares it with every later item until it stops. A batch naming a server this worker does not
have (or one that fails to start) has its items fail with the server's name and the fix.

What a worker trusts: anyone who can write to the Redis chooses a batch's prompt, model, turns,
permission mode and allow/deny rules, so the worker checks them as forkloop batch checks its flags
and fails a batch whose settings are invalid (its items record why; other batches go on). This
host's settings (the --cwd project's, untrusted ones narrowed as for forkloop run, and the
user's) apply on top of every batch: their deny and ask rules hold in every mode, and
permissions.disableBypassPermissionsMode: "disable" refuses bypassPermissions batches even with
the flag above. The worker works in its own --cwd, never in the directory a batch names.

Transcripts: <state dir>/batches/<id>/transcripts/ on this host. Exit codes: 0 stopped, 2 bad flags or
Redis unreachable.`;

const count = (flag: string, example: number, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `must be a whole number, e.g. --${flag} ${example}`)
    .transform(Number)
    .refine((value) => value >= min && value <= max, `must be between ${min} and ${max}`);

const schema = z.object({
  help: z.boolean().optional(),
  queue: z.string().min(1, "give a Redis URL, e.g. --queue redis://127.0.0.1:6379").optional(),
  concurrency: count("concurrency", 8, 1, 256).optional(),
  cwd: z.string().min(1).optional(),
  "state-dir": z.string().min(1, "give a directory, e.g. --state-dir ~/forkloop-state").optional(),
  "trust-project": z.boolean().optional(),
  sandbox: sandboxFlagSchema.optional(),
  "mcp-config": z.array(z.string().min(1, "give a file, e.g. --mcp-config mcp.json")).optional(),
  "strict-mcp-config": z.boolean().optional(),
  "allow-dangerously-skip-permissions": z.boolean().optional(),
  "lock-duration": count("lock-duration", 30000, 1000, 3_600_000).optional(),
  "stalled-interval": count("stalled-interval", 30000, 500, 3_600_000).optional(),
});

export async function workerCommand(argv: readonly string[], context: CommandContext): Promise<ExitCode> {
  const { flags, positionals } = parseCommand(
    {
      command: "worker",
      usage: WORKER_USAGE,
      schema,
      options: {
        help: { type: "boolean", short: "h" },
        queue: { type: "string" },
        concurrency: { type: "string" },
        cwd: { type: "string" },
        "state-dir": { type: "string" },
        "trust-project": { type: "boolean" },
        sandbox: { type: "string" },
        "mcp-config": { type: "string", multiple: true },
        "strict-mcp-config": { type: "boolean" },
        "allow-dangerously-skip-permissions": { type: "boolean" },
        "lock-duration": { type: "string" },
        "stalled-interval": { type: "string" },
      },
    },
    spreadMcpConfigArgs(argv),
  );
  if (flags.help) {
    context.stdout.write(`${WORKER_USAGE}\n`);
    return EXIT.ok;
  }
  if (positionals.length > 0) throw new CliError(`forkloop worker takes no arguments.\n\n${WORKER_USAGE}`);
  if (flags.queue === undefined) throw new CliError(`--queue is required.\n\n${WORKER_USAGE}`);
  const address = parseQueueUrl(flags.queue);
  const cwd = await checkProjectDir(resolve(context.cwd, flags.cwd ?? "."));
  const state = projectState({
    cwd,
    env: context.env,
    ...(flags["state-dir"] === undefined ? {} : { stateDir: flags["state-dir"] }),
  });
  const log = (line: string) => context.stderr.write(`${line}\n`);
  // R-R9: set when this host's key or endpoint fails every item; the worker then stops.
  let hostFailure: string | undefined;
  const stop = new AbortController();
  const concurrency = flags.concurrency ?? 8;
  const { worker, policy, self, close } = await startQueueService({
    address,
    cwd,
    state,
    env: context.env,
    trustProject: flags["trust-project"] === true,
    sandbox: flags.sandbox,
    mcpConfig: flags["mcp-config"]?.map((value) => mcpConfigFlag(value, context.cwd)),
    strictMcpConfig: flags["strict-mcp-config"],
    concurrency,
    allowBypassPermissions: flags["allow-dangerously-skip-permissions"] === true,
    lockDurationMs: flags["lock-duration"],
    stalledIntervalMs: flags["stalled-interval"],
    clock: context.clock,
    log,
    onEvent(event) {
      if (event.type === "host_failure") {
        hostFailure = event.reason;
        stop.abort();
      }
      const line = describeWorkerEvent(event, address.display);
      if (line !== undefined) log(line);
    },
  });
  try {
    log(`forkloop worker ${process.pid}: running items from ${address.display} (concurrency ${concurrency})`);
    const notice = workerPolicyNotice(policy);
    if (notice !== undefined) log(notice);
    const stopping = AbortSignal.any([context.signal, stop.signal]);
    await new Promise<void>((resolveStop) => {
      if (stopping.aborted) resolveStop();
      stopping.addEventListener("abort", () => resolveStop(), { once: true });
    });
    log(
      `stopping: taking no more items, finishing ${plural(worker.running(), "running item")} (again to exit at once)`,
    );
    await worker.close();
    if (hostFailure !== undefined) {
      // R-R9: nothing failed: the items this host could not run wait on the queue.
      log(
        `${self}: stopped: ${hostFailure}; the items it could not run went back to the queue, none failed — fix it, then start the worker again`,
      );
      return EXIT.usage;
    }
    log("stopped: every item this worker started is finished and recorded");
    return EXIT.ok;
  } finally {
    await close();
  }
}
