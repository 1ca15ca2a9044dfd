import { access, mkdir, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { type BatchSpec, batchHistory, loadBatch } from "@forkloop/batch";
import { TRANSCRIPT_EXTENSION } from "@forkloop/orchestrator";
import { NotATranscriptError, renderBatchReport, renderSessionReport } from "@forkloop/report";
import {
  batchesDirs,
  checkId,
  checkProjectDir,
  OptionsError,
  type ProjectState,
  projectState,
  savedSession,
  sessionsDirs,
} from "@forkloop/sdk";
import { z } from "zod";

import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode } from "../exit-codes.js";
import { parseCommand } from "../flags.js";
import { openFile } from "../open-file.js";

const REPORT_USAGE = `Usage: forkloop report <session-id | batch-id | FILE.fltr> [--out FILE] [--open] [--cwd DIR] [--state-dir DIR]

Writes one self-contained HTML page (its script, styles and data inlined; viewing it fetches
nothing) from the transcripts and the batch journal.
  a session   the timeline of requests and tool calls (time to first token, durations, retries,
              fallbacks, compactions), context per request against the auto-compact and blocking
              lines, tokens and cost per request, the fork tree (every Agent, Skill, compact and
              session-memory fork with its tokens, cost and share read from the parent's cache)
              and the messages
  a batch     totals, cost and cache reads per item, concurrency over time (429 pauses shaded),
              failures by error, and a sortable, filterable table of every item with its session
  FILE.fltr   any transcript, e.g. a batch item's (<state dir>/batches/<id>/transcripts/…)

  --out FILE  where to write it (default: <state dir>/reports/<session>.html for a session,
              report.html in the batch's output directory for a batch)
  --open      open it in the browser ($BROWSER, else the desktop's handler)
  --cwd DIR   the project whose sessions and batches to read (default: the current directory)
  --state-dir DIR  read the sessions and batches kept there instead`;

const schema = z.object({
  help: z.boolean().optional(),
  out: z.string().min(1, "give a file, e.g. --out run.html").optional(),
  open: z.boolean().optional(),
  cwd: z.string().min(1, "give a directory, e.g. --cwd ../project").optional(),
  "state-dir": z.string().min(1, "give a directory, e.g. --state-dir ~/forkloop-state").optional(),
});

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

type Target =
  | { readonly kind: "session"; readonly transcript: string }
  | { readonly kind: "batch"; readonly id: string };

async function resolveTarget(what: string, cwd: string, state: ProjectState): Promise<Target> {
  if (what.endsWith(TRANSCRIPT_EXTENSION)) {
    const transcript = resolve(cwd, what);
    const file = await stat(transcript).catch(() => undefined);
    if (!file?.isFile())
      throw new CliError(
        `report: ${file ? `${transcript} is a directory, not a transcript file` : `no transcript file ${transcript}`}; give a session id, a batch id or an existing ${TRANSCRIPT_EXTENSION} file.`,
      );
    return { kind: "session", transcript };
  }
  const id = checkId("session", what);
  try {
    return { kind: "session", transcript: savedSession(state, id).path };
  } catch (error) {
    if (!(error instanceof OptionsError)) throw error;
  }
  for (const dir of batchesDirs(state))
    if (await exists(join(dir, id, "batch.json"))) return { kind: "batch", id };
  throw new CliError(
    `report: "${what}" is neither a session in ${sessionsDirs(state).join(" or ")} nor a batch in ${batchesDirs(state).join(" or ")}. List them with \`forkloop sessions list\` and \`forkloop batch list\`.`,
  );
}

async function writeHtml(path: string, html: string): Promise<string> {
  // The page shows prompts and file contents (R-S13).
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFile(path, html, { mode: 0o600 });
  return path;
}

/** A session's report, by default `<state dir>/reports/<name>.html`; returns the file's path. */
export async function writeSessionHtml(
  transcript: string,
  state: ProjectState,
  out?: string,
): Promise<string> {
  const name = basename(transcript, TRANSCRIPT_EXTENSION);
  const html = await renderSessionReport(transcript).catch((error: unknown) => {
    if (error instanceof NotATranscriptError) throw new CliError(`report: ${error.message}`);
    throw error;
  });
  return writeHtml(out ?? join(state.dir, "reports", `${name}.html`), html);
}

/** A batch's report, by default `report.html` beside report.md; returns the file's path. */
export async function writeBatchHtml(spec: BatchSpec, dir: string, out?: string): Promise<string> {
  return writeHtml(
    out ?? join(spec.outputDir, "report.html"),
    await renderBatchReport(await batchHistory(spec, dir)),
  );
}

/** The line `run` and `batch` print at the end: how to see the report. */
export function reportHint(
  id: string,
  flags: { readonly cwd?: string | undefined; readonly "state-dir"?: string | undefined },
): string {
  const cwd = flags.cwd === undefined ? "" : ` --cwd ${flags.cwd}`;
  const stateDir = flags["state-dir"] === undefined ? "" : ` --state-dir ${flags["state-dir"]}`;
  return `forkloop report ${id}${cwd}${stateDir} --open`;
}

export async function reportCommand(argv: readonly string[], context: CommandContext): Promise<ExitCode> {
  const { flags, positionals } = parseCommand(
    {
      command: "report",
      usage: REPORT_USAGE,
      schema,
      options: {
        help: { type: "boolean", short: "h" },
        out: { type: "string" },
        open: { type: "boolean" },
        cwd: { type: "string" },
        "state-dir": { type: "string" },
      },
    },
    argv,
  );
  if (flags.help) {
    context.stdout.write(`${REPORT_USAGE}\n`);
    return EXIT.ok;
  }
  const [what, ...extra] = positionals;
  if (what === undefined || extra.length > 0) {
    throw new CliError(
      `forkloop report: give exactly one session id, batch id or transcript file.\n\n${REPORT_USAGE}`,
    );
  }
  const cwd = await checkProjectDir(resolve(context.cwd, flags.cwd ?? "."));
  const state = projectState({
    cwd,
    env: context.env,
    ...(flags["state-dir"] === undefined ? {} : { stateDir: flags["state-dir"] }),
  });
  const out = flags.out === undefined ? undefined : resolve(context.cwd, flags.out);
  const target = await resolveTarget(what, cwd, state);
  let path: string;
  if (target.kind === "session") path = await writeSessionHtml(target.transcript, state, out);
  else {
    const { spec, dir } = await loadBatch(state, target.id);
    // A queued batch has no local journal: its page would list no items.
    if (spec.queue !== undefined) {
      throw new CliError(
        `batch ${spec.id} ran on the queue ${spec.queue}: the HTML report reads a local batch's journal and transcripts, which a queued batch does not have here. Its results are in ${join(spec.outputDir, "results.jsonl")} and report.md.`,
      );
    }
    path = await writeBatchHtml(spec, dir, out);
  }
  context.stdout.write(`${path}\n`);
  if (flags.open) {
    const problem = await openFile(path, context.env);
    if (problem) context.stderr.write(`forkloop report: ${problem}; open ${path} yourself.\n`);
  }
  return EXIT.ok;
}
