import { access } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { ForkloopError } from "@forkloop/loop-core/errors";
import { loadTranscript, TRANSCRIPT_EXTENSION, type TranscriptRecord } from "@forkloop/orchestrator";
import { buildAgentView } from "./agent-view.js";
import { TextBudget } from "./message-view.js";
import { readShownTranscript } from "./read-transcript.js";
import type { AgentView, SessionReportData } from "./report-data.js";

/** A session report keeps nearly every message: cut only single texts past 200k characters. */
const SESSION_TEXT_BUDGET = 50_000_000;
const SESSION_BLOCK_LIMIT = 200_000;

/** The file given is not a forkloop transcript (no session in it): the CLI says so, exit 2. */
export class NotATranscriptError extends ForkloopError {
  override readonly name = "NotATranscriptError";
  constructor(readonly path: string) {
    super(
      `${path} holds no forkloop session (no session_start record): it is empty or not a transcript. Give a session id, a batch id or a transcript from \`forkloop sessions list\`.`,
      { code: "not_a_transcript", data: { path } },
    );
  }
}

/** Agent ids become file names: anything else in a `sub_agent` record is not followed. */
const AGENT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * Where a linked sub-agent's transcript is: beside the session's, in `<sessionId>/agents/`
 * (orchestrator's layout). The recorded path is used only when it lies in the same directory
 * tree, so a crafted transcript cannot make the report read (and embed) files elsewhere.
 */
async function childPath(
  parentPath: string,
  sessionId: string,
  link: Extract<TranscriptRecord, { type: "sub_agent" }>,
) {
  if (!AGENT_ID.test(link.agentId) || link.agentId.includes("..")) return undefined;
  const expected = join(dirname(parentPath), sessionId, "agents", `${link.agentId}${TRANSCRIPT_EXTENSION}`);
  if (await exists(expected)) return expected;
  const recorded = resolve(link.transcriptPath);
  const inside = relative(dirname(parentPath), recorded);
  if (!inside.startsWith("..") && recorded.endsWith(TRANSCRIPT_EXTENSION) && (await exists(recorded)))
    return recorded;
  return undefined;
}

function missingAgent(
  link: Extract<TranscriptRecord, { type: "sub_agent" }>,
  label: string,
  problem: string,
): AgentView {
  return {
    id: link.agentId,
    parentId: "main",
    querySource: link.querySource,
    label,
    model: "unknown",
    status: "no transcript",
    problem,
    createdAt: null,
    endedAt: null,
    turns: 0,
    tokens: { input: 0, cacheWrite: 0, cacheRead: 0, output: 0 },
    costUsd: 0,
    firstRequestCacheShare: null,
    limits: null,
    requests: [],
    tools: [],
    markers: [],
    rateLimits: [],
    inheritedMessages: 0,
    messages: [],
    messagesCut: false,
    timed: false,
  };
}

/**
 * Reads a session's transcript and every sub-agent transcript it links (Agent, Skill, compact,
 * session memory; nested sub-agents name the sub-agent that started them) into the report's data.
 * A missing, torn or damaged child transcript is shown as such; it does not stop the report. A
 * file with no session in it is a NotATranscriptError.
 */
export async function loadSessionReport(path: string): Promise<SessionReportData> {
  const budget = new TextBudget(SESSION_TEXT_BUDGET, SESSION_BLOCK_LIMIT);
  const main = await loadTranscript(path);
  if (main.start === undefined) throw new NotATranscriptError(path);
  const built = buildAgentView(main.records, { budget, torn: main.torn });
  const agents: AgentView[] = [built.view];
  const labels = new Map(built.toolLabels);
  const sessionId = main.start?.sessionId ?? "";
  for (const link of main.records) {
    if (link.type !== "sub_agent") continue;
    const file = await childPath(resolve(path), sessionId, link);
    if (file === undefined) {
      agents.push(
        missingAgent(link, link.querySource, `no transcript for ${link.agentId} next to the session's`),
      );
      continue;
    }
    const child = await readShownTranscript(file);
    const parent = child.start?.parent;
    const known = agents.some((agent) => agent.id === parent?.agentId);
    const childBuilt = buildAgentView(child.records, {
      budget,
      torn: child.torn,
      ...(child.problem === undefined ? {} : { damage: child.problem }),
      parentId: known ? (parent?.agentId ?? built.view.id) : built.view.id,
      label: (parent?.toolUseId === undefined ? undefined : labels.get(parent.toolUseId)) ?? link.querySource,
    });
    for (const [id, label] of childBuilt.toolLabels) labels.set(id, label);
    agents.push(childBuilt.view);
  }
  return {
    kind: "session",
    generatedAt: new Date().toISOString(),
    title: `Session ${sessionId || path}`,
    agents,
  };
}
