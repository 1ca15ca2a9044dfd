import { blocksOf } from "../conversation-turns.js";
import type { BrainReply, BrainRequest, ReplyBlock } from "../types.js";
import { compactionSummary, truncate } from "./compaction-summary.js";
import { describeContent } from "./describe-content.js";
import { findTools, type PolicyTools } from "./policy-tools.js";
import {
  currentTask,
  findFilePaths,
  lastTurnMessage,
  notificationsOf,
  planOf,
  type TaskPlan,
} from "./user-task.js";
import { webResearch } from "./web-research.js";

export { describeContent } from "./describe-content.js";

/** Every reply says what produced it: the simulator never pretends to be a model (SPEC §0). */
const SIGNATURE = "forkloop simulator, built-in policy — not a language model";

/** At most this many sub-agents (or parallel reads) in one fan-out turn. */
const MAX_FAN_OUT = 8;

type ToolResult = BrainRequest["lastToolResults"][number];
/** A tool result with the call it answers. */
interface Answered {
  name: string;
  input: Record<string, unknown>;
  result: ToolResult;
}

/**
 * The deterministic built-in policy that drives the CLI demo.
 * It reads only the user's own text (not `<system-reminder>` blocks), then:
 * - a compaction request gets a structured summary that carries facts over;
 * - "rename X to Y in FILE": Read the file, then Edit it (replace_all), then report;
 * - a glob, with Glob offered: list the files, then treat them as named files;
 * - several files, with Agent/Task offered: one sub-agent per file in one turn, then a summary of
 *   their reports (without an Agent tool: parallel reads);
 * - one file with a read tool: read it, then summarise its content;
 * - anything else gets a short deterministic answer.
 */
export function builtinPolicyBrain(request: BrainRequest): BrainReply {
  if (isCompactionRequest(request)) return compactionSummary(request, SIGNATURE);
  const tools = findTools(request.body);
  const task = currentTask(request.body);
  // Web search and fetch when the request declares them (R-D4), and their results' summary.
  const web = webResearch(request, task?.fresh ? task.text : null, (text) => `(${SIGNATURE}) ${text}`);
  if (web) return web;
  const plan = task ? planOf(task.text) : null;
  // R-D5: completion notices of background sub-agents report work already dispatched; the
  // policy acknowledges them and starts nothing (re-dispatching on each notice looped).
  const notices = notificationsOf(lastTurnMessage(request.body));
  if (notices.length > 0 && task?.fresh !== true) {
    const list = notices.map((n) => `${n.summary} (${n.status})`).join("; ");
    return say(
      `${notices.length} background task${notices.length === 1 ? "" : "s"} reported: ${list}. Nothing is left to start.`,
    );
  }
  if (task && plan && !task.fresh) {
    const answered = answeredCalls(request);
    if (answered.length > 0) return continueTask(plan, answered, tools);
    // A task whose work was dispatched and answered earlier is not started again (R-D5).
    return say(`The task "${truncate(task.text, 80)}" was already handled above.`);
  }
  if (plan) {
    const first = startTask(plan, tools);
    if (first) return first;
  }
  const said = task?.text ?? "";
  const words = said === "" ? 0 : said.split(/\s+/).length;
  return say(`Received a message of ${words} words: "${truncate(said, 80)}".`);
}

function startTask(plan: TaskPlan, tools: PolicyTools): BrainReply | null {
  if (plan.kind === "rename") {
    if (!tools.read) return null;
    return calls(`I will rename ${plan.from} to ${plan.to} in ${plan.file}: first I read it.`, [
      tools.read.call(plan.file),
    ]);
  }
  const glob = plan.globs[0];
  if (glob && tools.glob) {
    return calls(`I will list the files matching ${glob} with the ${tools.glob.name} tool.`, [
      { type: "tool_use", name: tools.glob.name, input: { pattern: glob } },
    ]);
  }
  return readFiles(plan.paths, tools);
}

/** Several files: one sub-agent each when an Agent tool is offered, else parallel reads. */
function readFiles(paths: readonly string[], tools: PolicyTools): BrainReply | null {
  const chosen = paths.slice(0, MAX_FAN_OUT);
  const more = paths.length > chosen.length ? ` (${paths.length - chosen.length} more left out)` : "";
  if (chosen.length >= 2 && tools.agent) {
    const agent = tools.agent;
    return calls(
      `I will start ${chosen.length} sub-agents with the ${agent.name} tool, one per file${more}.`,
      chosen.map((path) => agent.call(path)),
    );
  }
  const read = tools.read;
  if (chosen.length === 0 || !read) return null;
  const what = chosen.length === 1 ? (chosen[0] ?? "") : `${chosen.length} files${more}`;
  return calls(
    `I will read ${what} with the ${read.name} tool.`,
    chosen.map((path) => read.call(path)),
  );
}

function continueTask(plan: TaskPlan, answered: readonly Answered[], tools: PolicyTools): BrainReply {
  const last = answered[0] as Answered;
  if (answered.some((a) => a.name === tools.agent?.name)) return summariseReports(answered);
  if (plan.kind === "rename") {
    const step = renameStep(plan, last, tools);
    if (step) return step;
  }
  if (last.name === tools.glob?.name && !last.result.is_error) {
    const files = last.result.content
      .split("\n")
      .filter((line) => line.trim() !== "" && !line.startsWith("("))
      .sort();
    const next = readFiles(files, tools);
    if (next) return next;
  }
  return summariseResults(answered);
}

/** Read done → Edit (replace_all); Edit done → report. Null when the results are not the rename's. */
function renameStep(
  plan: Extract<TaskPlan, { kind: "rename" }>,
  last: Answered,
  tools: PolicyTools,
): BrainReply | null {
  if (last.name === tools.edit?.name) {
    const outcome = last.result.is_error
      ? `The edit failed: ${firstLine(last.result.content)}`
      : `Renamed ${plan.from} to ${plan.to} in ${plan.file}.`;
    return say(outcome);
  }
  if (last.name !== tools.read?.name) return null;
  if (last.result.is_error) return say(`I could not read ${plan.file}: ${firstLine(last.result.content)}`);
  if (!new RegExp(`\\b${escapeRegExp(plan.from)}\\b`).test(last.result.content)) {
    return say(`${plan.file} does not contain ${plan.from}; nothing to rename.`);
  }
  if (!tools.edit) return say(`No edit tool is offered, so ${plan.file} stays as it is.`);
  return calls(`${plan.file} contains ${plan.from}: replacing every occurrence with ${plan.to}.`, [
    {
      type: "tool_use",
      name: tools.edit.name,
      input: { file_path: plan.file, old_string: plan.from, new_string: plan.to, replace_all: true },
    },
  ]);
}

function summariseReports(answered: readonly Answered[]): BrainReply {
  const lines = answered.map((a, i) => {
    const what = typeof a.input.description === "string" ? a.input.description : `sub-agent ${i + 1}`;
    const status = a.result.is_error ? "failed" : "reported";
    // A sub-agent's result may end with its usage line (`[Agent …: … cache read N …]`): keep it,
    // it shows what the fork read from the parent's cache.
    const usage = /^\[[^\n]*\bcache read\b[^\n]*\]$/m.exec(a.result.content)?.[0];
    return `- ${what} (${status}): ${firstLine(reportOf(a.result.content))}${usage ? `\n  ${usage}` : ""}`;
  });
  return say(`${answered.length} sub-agents finished:\n${lines.join("\n")}`);
}

function summariseResults(answered: readonly Answered[]): BrainReply {
  const parts = answered.map(({ input, result }) => {
    const path = input.file_path ?? input.path;
    const subject = typeof path === "string" ? path : "the tool result";
    if (result.is_error) return `The tool reported an error for ${subject}: ${firstLine(result.content)}`;
    return describeContent(subject, result.content);
  });
  return {
    content: [{ type: "text", text: `${parts.join("\n\n")}\n\n(${SIGNATURE})` }],
    stop_reason: "end_turn",
  };
}

/** The last user message's tool results, each with the tool_use it answers (in result order). */
function answeredCalls(request: BrainRequest): Answered[] {
  const calls = new Map<string, { name: string; input: Record<string, unknown> }>();
  for (const message of request.body.messages) {
    if (message.role !== "assistant") continue;
    for (const block of blocksOf(message)) {
      if (block.type === "tool_use") calls.set(block.id, { name: block.name, input: block.input });
    }
  }
  return request.lastToolResults.flatMap((result) => {
    const call = calls.get(result.tool_use_id);
    return call ? [{ ...call, result }] : [];
  });
}

function isCompactionRequest(request: BrainRequest): boolean {
  if (request.querySource === "compact") return true;
  const text = request.lastUserText ?? "";
  return /summar(?:y|ise|ize)[^.\n]{0,80}conversation|conversation[^.\n]{0,80}summar/i.test(text);
}

/** The first file path in `text` (kept for callers of the first round's API). */
export function findFilePath(text: string): string | null {
  return findFilePaths(text)[0] ?? null;
}

function say(text: string): BrainReply {
  return { content: [{ type: "text", text: `(${SIGNATURE}) ${text}` }], stop_reason: "end_turn" };
}

function calls(text: string, uses: ReplyBlock[]): BrainReply {
  return { content: [{ type: "text", text: `(${SIGNATURE}) ${text}` }, ...uses] };
}

/**
 * The report inside Claude Code's hand-back frame (an Agent call's result: notes, the frame, the
 * report with every line indented, then the agent's id and usage lines); other text as it is.
 */
function reportOf(text: string): string {
  const start = text.indexOf(HAND_BACK_REPORT);
  if (start < 0) return text;
  const lines: string[] = [];
  for (const line of text.slice(start + HAND_BACK_REPORT.length).split("\n")) {
    if (!line.startsWith("  ")) break;
    lines.push(line.slice(2));
  }
  return lines.join("\n");
}

const HAND_BACK_REPORT = "The report follows:\n";

function firstLine(text: string): string {
  return truncate(text.split("\n").find((line) => line.trim() !== "") ?? "", 200);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
