import { realpathSync } from "node:fs";
import { tmpdir } from "node:os";
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
import type { SubAgentTask } from "../sub-agent-types.js";

export const TEST_MODEL = "claude-sonnet-5";

/** A system prompt long enough to pass every model's minimum cacheable length. */
export function testSystemPrompt(words = 3_000): TextBlockParam[] {
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
    permissionMode: "bypassPermissions",
    ...overrides,
  };
}

/**
 * Runs one in-process parent turn with query() and returns the CacheSafeParams it saved (R-F3),
 * so a test can fork from a real parent request.
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
    onCacheSafeParams: (params) => {
      saved = params;
    },
  });
  let step = await generator.next();
  while (!step.done) step = await generator.next();
  if (!saved) throw new Error("the parent turn saved no CacheSafeParams");
  return { cacheSafeParams: saved, terminal: step.value };
}
