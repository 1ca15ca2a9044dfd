import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import {
  buildSystemBlocks,
  type CacheSafeParams,
  createAgentState,
  createUserMessage,
  type Message,
  query,
  type Terminal,
  type TextBlockParam,
  type Tool,
  toolDefinitions,
} from "@forkloop/loop-core";
import { createBuiltinTools } from "@forkloop/tools";
import { type AgentPool, createAgentPool } from "../agent-pool.js";
import { type AgentProfile, type AgentProfileFields, agentProfile } from "../agent-profile.js";
import type { MainSessionOptions } from "../main-session.js";
import type { SubAgentTask } from "../sub-agent-types.js";

export const TEST_MODEL = "claude-sonnet-5";

/** A system prompt long enough to pass every model's minimum cacheable length. */
function testSystemPrompt(words = 3_000): TextBlockParam[] {
  const filler = Array.from({ length: words }, (_, index) => `rule${index % 97}`).join(" ");
  return buildSystemBlocks([
    { type: "text", text: "You are a forkloop test agent talking to the forkloop simulator." },
    { type: "text", text: `Stable instructions: ${filler}` },
  ]);
}

/** CacheSafeParams as the main loop would save them, for tests that need no parent run. */
export function testCacheSafeParams(
  options: {
    model?: string;
    tools?: readonly Tool[];
    messages?: readonly Message[];
    maxOutputTokens?: number;
  } = {},
): CacheSafeParams {
  return {
    model: options.model ?? TEST_MODEL,
    systemPrompt: testSystemPrompt(),
    tools: toolDefinitions(options.tools ?? createBuiltinTools()),
    maxOutputTokens: options.maxOutputTokens ?? 8_000,
    forkContextMessages: options.messages ?? [
      createUserMessage("The parent's task: look after the repository."),
    ],
  };
}

/** A profile for tests: the test model in bypassPermissions, unless `fields` say otherwise. */
export function testProfile(fields: Partial<AgentProfileFields> = {}): AgentProfile {
  return agentProfile({ model: TEST_MODEL, permissionMode: "bypassPermissions", ...fields });
}

/** A sub-agent task with defaults for tests. */
export function testTask(overrides: Partial<SubAgentTask> & { id: string }): SubAgentTask {
  const cwd = realpathSync(tmpdir());
  return {
    cwd,
    workspaceRoots: [cwd],
    cacheSafeParams: testCacheSafeParams(),
    promptMessages: [{ role: "user", content: `Sub-agent ${overrides.id}: do your part.` }],
    querySource: "agent:test",
    toolNames: createBuiltinTools().map((tool) => tool.name),
    profile: testProfile(),
    ...overrides,
  };
}

/** A test task in `dir` whose prompt names it (`Sub-agent <id>: go.`), for a brain to route on. */
export function namedTask(dir: string, id: string, extra: Partial<SubAgentTask> = {}): SubAgentTask {
  return testTask({
    cwd: dir,
    workspaceRoots: [dir],
    ...extra,
    id,
    promptMessages: [{ role: "user", content: `Sub-agent ${id}: go.` }],
  });
}

/**
 * A batch item after `session` ran: a session of its own in `dir` (SessionStart, UserPromptSubmit)
 * on the session's saved prefix, as the batch runs its items (R-F3).
 */
export function batchItemTask(
  session: { cacheSafeParams(): CacheSafeParams | undefined },
  dir: string,
  id: string,
  profile: AgentProfile,
): SubAgentTask {
  const prefix = session.cacheSafeParams();
  if (prefix === undefined) throw new Error("the session saved no prefix");
  return namedTask(dir, id, {
    startsSession: true,
    querySource: "batch",
    cacheSafeParams: { ...prefix, forkContextMessages: [] },
    profile,
  });
}

/** Session options against the simulator: a shared pool, `dir` as cwd and home, no session memory. */
export function testSessionOptions(options: {
  readonly baseURL: string;
  readonly dir: string;
  readonly pool: AgentPool;
}): MainSessionOptions {
  return {
    endpoint: { apiKey: "test-key", baseURL: options.baseURL },
    cwd: options.dir,
    profile: testProfile(),
    sessionsDir: `${options.dir}/sessions`,
    pool: options.pool,
    home: options.dir,
    sessionMemory: false,
  };
}

/** Drains a loop's generator and returns what it returned (the Terminal). */
export { finishTurn as runToEnd } from "../agent-runner.js";

/** What an orchestrator test drives sessions with: its simulator, a one-thread pool on it, a temp dir. */
export interface SessionRig<Sim> {
  readonly sim: Sim;
  readonly pool: AgentPool;
  /** A fresh directory (its real path: workers see the same one), removed by close(). */
  readonly dir: string;
  /** Closes the pool, then the simulator, then removes the directory. */
  close(): Promise<void>;
}

/**
 * The setup the session tests share: the simulator `sim` resolves to (any server with a `url`;
 * the caller starts it, so this subpath needs no simulator of its own), a pool of one worker
 * thread on it, and a temp directory named after `prefix`.
 */
export async function startSessionRig<Sim extends { readonly url: string; close(): Promise<void> }>(
  sim: Sim | Promise<Sim>,
  prefix: string,
): Promise<SessionRig<Sim>> {
  const started = await sim;
  const pool = createAgentPool({ endpoint: { apiKey: "test-key", baseURL: started.url }, maxThreads: 1 });
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `forkloop-${prefix}-`)));
  return {
    sim: started,
    pool,
    dir,
    async close() {
      await pool.close();
      await started.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The text of the last assistant message of a history. */
export function finalText(messages: readonly Message[]): string {
  const last = messages.filter((message) => message.type === "assistant").at(-1);
  return last?.type === "assistant"
    ? last.message.content.map((block) => (block.type === "text" ? block.text : "")).join("")
    : "";
}

/** The text of every tool_result in a history, in order. */
export function toolResultTexts(messages: readonly Message[]): string[] {
  return messages.flatMap((message) =>
    message.type === "user" && typeof message.message.content !== "string"
      ? message.message.content.flatMap((block) =>
          block.type === "tool_result"
            ? [
                typeof block.content === "string"
                  ? block.content
                  : (block.content ?? []).map((part) => (part.type === "text" ? part.text : "")).join(""),
              ]
            : [],
        )
      : [],
  );
}

/**
 * Runs one in-process parent turn with query() and returns its last request's prefix (R-F3, as
 * `request_start` announced it) continued by the whole turn's history, so a test can fork from a
 * real parent request.
 */
export async function runParentTurn(options: {
  client: Anthropic;
  prompt: string;
  cwd: string;
  systemPrompt?: readonly TextBlockParam[];
  tools?: readonly Tool[];
  model?: string;
}): Promise<{ cacheSafeParams: CacheSafeParams; terminal: Terminal }> {
  let saved: CacheSafeParams | undefined;
  const tools = options.tools ?? createBuiltinTools();
  const generator = query({
    messages: [createUserMessage(options.prompt)],
    systemPrompt: options.systemPrompt ?? testSystemPrompt(),
    toolUseContext: {
      cwd: options.cwd,
      workspaceRoots: [options.cwd],
      tools,
      abortController: new AbortController(),
      agentId: "main",
      agentState: createAgentState(),
      options: { model: options.model ?? TEST_MODEL, permissionMode: "bypassPermissions" },
    },
    querySource: "repl_main_thread",
    client: options.client,
  });
  let step = await generator.next();
  while (!step.done) {
    if (step.value.type === "request_start") saved = step.value.prefix;
    step = await generator.next();
  }
  if (!saved) throw new Error("the parent turn sent no request");
  return { cacheSafeParams: { ...saved, forkContextMessages: step.value.messages }, terminal: step.value };
}

/** The parts of a request that make up the prompt-cache key besides the messages (R-F3). */
const CACHE_KEY_PARTS = ["model", "tools", "system", "thinking", "tool_choice", "max_tokens"] as const;

/** A value without cache_control markers: a marker is not content (api doc §5). */
function withoutMarkers(value: unknown): string {
  return JSON.stringify(value, (key, inner) => (key === "cache_control" ? undefined : inner));
}

/**
 * How a fork's recorded request body differs from its parent's as a cache prefix (R-F3): each
 * cache-key part must be the same bytes, and every parent message must open the fork's messages
 * unchanged (markers aside), with the fork's own messages after them. Empty = a clean prefix.
 */
export function forkPrefixDifferences(parentRawBody: string, forkRawBody: string): string[] {
  const parent = JSON.parse(parentRawBody) as Record<string, unknown>;
  const fork = JSON.parse(forkRawBody) as Record<string, unknown>;
  const differences: string[] = [];
  for (const part of CACHE_KEY_PARTS) {
    const bytes = JSON.stringify(fork[part]);
    if (bytes !== JSON.stringify(parent[part])) differences.push(`${part} differs`);
    else if (bytes !== undefined && !parentRawBody.includes(bytes))
      differences.push(`${part} is not byte-identical in the raw bodies`);
  }
  const parentMessages = parent.messages as unknown[];
  const forkMessages = fork.messages as unknown[];
  if (forkMessages.length <= parentMessages.length) differences.push("the fork added no messages");
  parentMessages.forEach((message, index) => {
    if (withoutMarkers(forkMessages[index]) !== withoutMarkers(message))
      differences.push(`message ${index} differs`);
  });
  return differences;
}

/** The agent runner's recorder, for benchmarks of what it adds to the loop (R-V5: telemetry off is free). */
export { AgentRecorder } from "../agent-runner.js";
