import { z } from "zod";
import type { LoopEvent } from "../loop-events.js";
import type { Terminal } from "../terminal.js";
import { createAgentState, type Tool, type ToolResult, type ToolUseContext } from "../tool.js";

/** A ToolUseContext for tests: main agent, bypass permissions, a fresh abort controller. */
export function testContext(
  overrides: Partial<ToolUseContext> & { readonly model?: string } = {},
): ToolUseContext {
  const { model, ...rest } = overrides;
  return {
    cwd: process.cwd(),
    workspaceRoots: [process.cwd()],
    tools: [],
    abortController: new AbortController(),
    agentId: "main",
    agentState: createAgentState(),
    options: { model: model ?? "claude-sonnet-4-6", permissionMode: "bypassPermissions" },
    ...rest,
  };
}

/** A small tool for loop tests: `call` gets the parsed input; defaults to a safe, read-only tool. */
export function testTool(options: {
  readonly name: string;
  readonly schema?: z.ZodType<Record<string, unknown>>;
  readonly safe?: boolean;
  readonly maxResultSizeChars?: number;
  readonly call?: (
    input: Record<string, unknown>,
    context: ToolUseContext & { toolUseId: string },
  ) => Promise<ToolResult>;
}): Tool {
  return {
    name: options.name,
    description: `Test tool ${options.name}`,
    inputSchema: options.schema ?? z.object({}).loose(),
    isConcurrencySafe: () => options.safe ?? true,
    isReadOnly: () => options.safe ?? true,
    maxResultSizeChars: options.maxResultSizeChars ?? 100_000,
    call: options.call ?? (async () => ({ content: `${options.name} ok` })),
  };
}

export interface Collected {
  readonly events: LoopEvent[];
  readonly terminal: Terminal;
}

/** Drains a query generator. */
export async function collect(generator: AsyncGenerator<LoopEvent, Terminal>): Promise<Collected> {
  const events: LoopEvent[] = [];
  while (true) {
    const next = await generator.next();
    if (next.done) return { events, terminal: next.value };
    events.push(next.value);
  }
}
