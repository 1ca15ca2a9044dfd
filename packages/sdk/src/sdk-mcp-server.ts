import { createRequire } from "node:module";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { z } from "zod";

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

/**
 * What `createSdkMcpServer` returns (the Agent SDK's `McpSdkServerConfigWithInstance`):
 * `mcpServers: { [name]: server }` gives its tools to a query. `instance` is a real `McpServer`
 * holding them; each query connects its own copy over the MCP SDK's in-memory transport, because
 * an `McpServer` serves one connection at a time and many queries may share one server.
 */
export interface SdkMcpServer {
  type: "sdk";
  name: string;
  version: string;
  tools: readonly SdkMcpToolDefinition[];
  instance: McpServer;
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
 * The Agent SDK's `createSdkMcpServer()`: an in-process MCP server whose tools the model sees as
 * `mcp__<server>__<tool>` (R-K1, on the MCP client of R-M1). A sub-agent's calls
 * come back to the parent over comlink like every MCP tool's.
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
  const definition = { name: options.name, version: options.version ?? "1.0.0", tools: options.tools ?? [] };
  let instance: McpServer | undefined;
  return {
    type: "sdk",
    ...definition,
    // R-V2: the MCP server code loads when a program reads `instance` (queries connect copies of
    // their own, `mcpServerOf`), not at import or at this call. Read, it is loaded synchronously
    // from the MCP SDK's CommonJS build — a real McpServer, as the Agent SDK's (bundled) one is.
    get instance(): McpServer {
      instance ??= serverWith(definition, requireMcpServer());
      return instance;
    },
  };
}

function requireMcpServer(): typeof McpServer {
  const loaded = createRequire(import.meta.url)("@modelcontextprotocol/sdk/server/mcp.js") as {
    McpServer: typeof McpServer;
  };
  return loaded.McpServer;
}

/** A fresh `McpServer` serving the definitions' tools (one per connection). */
export async function mcpServerOf(
  server: Pick<SdkMcpServer, "name" | "version" | "tools">,
): Promise<McpServer> {
  const { McpServer: Server } = await import("@modelcontextprotocol/sdk/server/mcp.js");
  return serverWith(server, Server);
}

function serverWith(
  server: Pick<SdkMcpServer, "name" | "version" | "tools">,
  Server: typeof McpServer,
): McpServer {
  const instance = new Server({ name: server.name, version: server.version });
  for (const definition of server.tools) {
    instance.registerTool(
      definition.name,
      {
        description: definition.description,
        inputSchema: definition.inputSchema,
        ...(definition.annotations === undefined ? {} : { annotations: definition.annotations }),
      },
      // biome-ignore lint/suspicious/noExplicitAny: the MCP SDK's callback type is per-shape
      (async (args: any, extra: unknown) => definition.handler(args, extra)) as never,
    );
  }
  return instance;
}
