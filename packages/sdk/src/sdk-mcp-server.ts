import { annotationTraits, type ContentBlockParam, type Tool, type ToolResult } from "@forkloop/loop-core";
import { z } from "zod";

/** MCP's CallToolResult, the part a tool handler fills in. */
export interface CallToolResult {
  content: (
    | { type: "text"; text: string }
    | { type: "image"; data: string; mimeType: string }
    | { type: string; [key: string]: unknown }
  )[];
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
}

/** MCP's tool annotations; `readOnlyHint` lets calls run without approval and in parallel. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface SdkMcpToolDefinition<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  description: string;
  inputSchema: Shape;
  handler: (args: z.infer<z.ZodObject<Shape>>, extra: unknown) => Promise<CallToolResult>;
  annotations?: ToolAnnotations;
}

/** What `createSdkMcpServer` returns; `mcpServers: { [name]: server }` gives its tools to a query. */
export interface SdkMcpServer {
  type: "sdk";
  name: string;
  version: string;
  tools: readonly SdkMcpToolDefinition[];
}

/** The Agent SDK's `tool()`: a zod raw shape and a handler returning a CallToolResult. */
export function tool<Shape extends z.ZodRawShape>(
  name: string,
  description: string,
  inputSchema: Shape,
  handler: (args: z.infer<z.ZodObject<Shape>>, extra: unknown) => Promise<CallToolResult>,
  extras?: { annotations?: ToolAnnotations },
): SdkMcpToolDefinition<Shape> {
  return {
    name,
    description,
    inputSchema,
    handler,
    ...(extras?.annotations === undefined ? {} : { annotations: extras.annotations }),
  };
}

/**
 * The Agent SDK's `createSdkMcpServer()`: an in-process server whose tools the model sees as
 * `mcp__<server>__<tool>`. Its tools run on the Tool contract in this process (no MCP round trip);
 * a sub-agent's calls come back to the parent over comlink like every parent-side tool. An
 * `McpServer` of `@modelcontextprotocol/sdk` is given as `{ type: "sdk", name, instance }` instead.
 */
export function createSdkMcpServer(options: {
  name: string;
  version?: string;
  // biome-ignore lint/suspicious/noExplicitAny: each tool has its own input shape
  tools?: SdkMcpToolDefinition<any>[];
}): SdkMcpServer {
  if (!/^[A-Za-z0-9_-]+$/.test(options.name)) {
    throw new TypeError(`createSdkMcpServer: name "${options.name}" must be letters, digits, "_" or "-"`);
  }
  return { type: "sdk", name: options.name, version: options.version ?? "1.0.0", tools: options.tools ?? [] };
}

export function mcpToolName(server: string, toolName: string): string {
  return `mcp__${server}__${toolName}`;
}

/** The server's tools as loop tools: validated input, the handler's result as the tool_result. */
export function sdkServerTools(server: SdkMcpServer): Tool[] {
  return server.tools.map((definition) => {
    const annotations = definition.annotations ?? {};
    const tool: Tool = {
      name: mcpToolName(server.name, definition.name),
      description: definition.description,
      inputSchema: z.object(definition.inputSchema) as unknown as Tool["inputSchema"],
      // Kept on the tool so a sub-agent's proxy (it runs in the parent) answers alike (issue 15).
      annotations,
      ...annotationTraits(annotations),
      maxResultSizeChars: 100_000,
      async call(input, context): Promise<ToolResult> {
        const extra = { signal: context.abortController.signal, toolUseId: context.toolUseId };
        let result: CallToolResult;
        try {
          result = await definition.handler(input, extra);
        } catch (error) {
          // A throwing handler is the tool's failure, reported to the model, not a crash.
          return { isError: true, content: `${tool.name} failed: ${(error as Error).message ?? error}` };
        }
        return { content: toContentBlocks(result), ...(result.isError === true ? { isError: true } : {}) };
      },
    };
    return tool;
  });
}

function toContentBlocks(result: CallToolResult): ContentBlockParam[] {
  return result.content.map((block): ContentBlockParam => {
    if (block.type === "text" && typeof block.text === "string") return { type: "text", text: block.text };
    if (block.type === "image" && typeof block.data === "string" && typeof block.mimeType === "string") {
      return {
        type: "image",
        source: { type: "base64", data: block.data, media_type: block.mimeType as "image/png" },
      };
    }
    return { type: "text", text: JSON.stringify(block) };
  });
}
