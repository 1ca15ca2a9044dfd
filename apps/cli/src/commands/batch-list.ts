import { viewBatch, viewBatches } from "@forkloop/batch";
import {
  batchStatusJson,
  batchViewSummary,
  formatBatchListLine,
  formatBatchStatus,
} from "@forkloop/batch/internal";
import { batchesDirs, checkId, type ProjectState } from "@forkloop/sdk";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode } from "../exit-codes.js";

/** `forkloop batch list`: every batch of the project, newest first. `batch status ID`: one batch. */
export async function batchListCommand(
  action: "list" | "status",
  id: string | undefined,
  options: { state: ProjectState; json: boolean },
  context: CommandContext,
): Promise<ExitCode> {
  const out = (line: string) => context.stdout.write(`${line}\n`);
  if (action === "status") {
    if (id === undefined)
      throw new CliError("forkloop batch status needs a batch id: `forkloop batch status ID`.");
    const view = await viewBatch(options.state, checkId("batch", id));
    if (options.json) out(JSON.stringify(batchStatusJson(view)));
    else context.stdout.write(formatBatchStatus(view));
    return EXIT.ok;
  }
  const views = await viewBatches(options.state, (name, error) =>
    context.stderr.write(
      `forkloop batch list: ${name}: ${error instanceof Error ? error.message : String(error)}\n`,
    ),
  );
  if (options.json) {
    for (const view of views) out(JSON.stringify(batchViewSummary(view)));
    return EXIT.ok;
  }
  if (views.length === 0) {
    context.stderr.write(
      `no batches for ${options.state.projectRoot} yet (looked in ${batchesDirs(options.state).join(", ")}); \`forkloop batch --files … --prompt …\` starts one.\n`,
    );
    return EXIT.ok;
  }
  for (const view of views) out(formatBatchListLine(view));
  return EXIT.ok;
}
