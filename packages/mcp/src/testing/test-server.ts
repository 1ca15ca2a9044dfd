/**
 * forkloop's MCP test server (stdio), built with the SDK's McpServer: the protocol features the
 * real servers on npm do not all show — annotations, image results, slow calls, a crash in the
 * middle of a call, paginated tool lists, names over 128 characters, a schema that does not
 * compile. Run with `node dist/testing/test-server.js [flags]`:
 *   --page-size N     tools/list answers N tools a page (with nextCursor)
 *   --extra-tools N   adds tools extra_0 … extra_{N-1}
 *   --long-name       adds a tool whose full name is over 128 characters
 *   --bad-schema      adds a tool whose input schema is not valid JSON Schema
 *   --fail-start      writes a reason to stderr and exits 3 before speaking MCP
 *   --hang-start      reads stdin and never answers (a server that does not start)
 *   --peers DIR:N     before speaking MCP, leaves a file in DIR and waits until DIR holds N:
 *                     N servers so started all connect only if they are started together
 *   --linger          keeps running after its stdin ends, until a signal ends it (as servers
 *                     with open handles do: a browser, a database pool, a timer)
 *   --approver JSON   adds `approve`, a permission-prompt tool answering as JSON says (approver-tool.ts)
 */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
  type ToolAnnotations,
} from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { APPROVER_SHAPE, type ApproverConfig, approverReply } from "./approver-tool.js";
import { TEST_PNG_BASE64 } from "./test-png.js";

interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly shape: z.ZodRawShape;
  readonly annotations?: ToolAnnotations;
  readonly run: (args: Record<string, unknown>, signal: AbortSignal) => Promise<CallToolResult>;
}

const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] });
const notes: string[] = [];

const { values: flags } = parseArgs({
  options: {
    "page-size": { type: "string" },
    "extra-tools": { type: "string" },
    "long-name": { type: "boolean" },
    "bad-schema": { type: "boolean" },
    "fail-start": { type: "boolean" },
    "hang-start": { type: "boolean" },
    linger: { type: "boolean" },
    peers: { type: "string" },
    approver: { type: "string" },
  },
});

const specs: ToolSpec[] = [
  {
    name: "echo",
    description: "Returns the text it is given.",
    shape: { text: z.string() },
    annotations: { readOnlyHint: true },
    run: async (args) => text(String(args.text)),
  },
  {
    name: "add_note",
    description: "Stores a note; returns how many notes there are.",
    shape: { note: z.string().min(1) },
    annotations: { destructiveHint: false },
    run: async (args) => {
      notes.push(String(args.note));
      return text(`${notes.length} notes`);
    },
  },
  {
    name: "image",
    description: "Returns a caption and a 1x1 PNG.",
    shape: {},
    annotations: { readOnlyHint: true },
    run: async () => ({
      content: [
        { type: "text", text: "a 1x1 png:" },
        { type: "image", data: TEST_PNG_BASE64, mimeType: "image/png" },
      ],
    }),
  },
  {
    name: "slow",
    description: "Waits ms milliseconds, then answers.",
    shape: { ms: z.number().int().min(0) },
    annotations: { readOnlyHint: true },
    run: async (args, signal) => {
      await sleep(Number(args.ms), undefined, { signal }).catch(() => undefined);
      return text(`slept ${String(args.ms)} ms`);
    },
  },
  {
    name: "big",
    description: "Returns a text of the given length.",
    shape: { chars: z.number().int().min(0) },
    annotations: { readOnlyHint: true },
    run: async (args) => text("word ".repeat(Math.ceil(Number(args.chars) / 5)).slice(0, Number(args.chars))),
  },
  {
    name: "fail",
    description: "Always reports a tool error.",
    shape: {},
    run: async () => ({ isError: true, content: [{ type: "text", text: "the tool failed on purpose" }] }),
  },
  {
    name: "crash",
    description: "Kills this server process in the middle of the call.",
    shape: {},
    run: async () => {
      process.kill(process.pid, "SIGKILL");
      return text("unreachable");
    },
  },
  {
    name: "pid",
    description: "Returns this server's process id.",
    shape: {},
    annotations: { readOnlyHint: true },
    run: async () => text(String(process.pid)),
  },
  {
    name: "env",
    description: "Returns an environment variable of this server process.",
    shape: { name: z.string() },
    annotations: { readOnlyHint: true },
    run: async (args) => text(process.env[String(args.name)] ?? "(unset)"),
  },
];
for (let index = 0; index < Number(flags["extra-tools"] ?? 0); index++) {
  specs.push({
    name: `extra_${index}`,
    description: `Extra tool ${index}.`,
    shape: {},
    annotations: { readOnlyHint: true },
    run: async () => text(`extra ${index}`),
  });
}
if (flags.approver !== undefined) {
  const config = JSON.parse(flags.approver) as ApproverConfig;
  specs.push({
    name: "approve",
    description: "Answers a permission prompt: allow (with the input to run) or deny (with a message).",
    shape: APPROVER_SHAPE,
    run: async (args) => approverReply(config, args),
  });
}
if (flags["long-name"]) {
  specs.push({
    name: `long_${"x".repeat(120)}`,
    description: "Too long a name.",
    shape: {},
    run: async () => text(""),
  });
}

function definition(spec: ToolSpec): Tool {
  return {
    name: spec.name,
    description: spec.description,
    inputSchema: z.toJSONSchema(z.object(spec.shape)) as Tool["inputSchema"],
    ...(spec.annotations === undefined ? {} : { annotations: spec.annotations }),
  };
}

async function waitForPeers(spec: string): Promise<void> {
  const at = spec.lastIndexOf(":");
  const dir = spec.slice(0, at);
  const count = Number(spec.slice(at + 1));
  writeFileSync(join(dir, String(process.pid)), "");
  while (readdirSync(dir).length < count) await sleep(20);
}

async function main(): Promise<void> {
  if (flags["fail-start"]) {
    process.stderr.write("test server: refusing to start (--fail-start)\n");
    process.exit(3);
  }
  if (flags["hang-start"]) {
    process.stdin.resume();
    return;
  }
  if (flags.peers) await waitForPeers(flags.peers);
  const server = new McpServer({ name: "forkloop-test-server", version: "1.0.0" });
  for (const spec of specs) {
    server.registerTool(
      spec.name,
      {
        description: spec.description,
        inputSchema: spec.shape,
        ...(spec.annotations ? { annotations: spec.annotations } : {}),
      },
      (args: Record<string, unknown>, extra) => spec.run(args, extra.signal),
    );
  }
  // McpServer answers tools/list in one page; this server pages it (and can add a broken schema),
  // while calls still go through McpServer's own validation and dispatch.
  const listed: Tool[] = specs.map(definition);
  if (flags["bad-schema"]) {
    listed.push({
      name: "bad_schema",
      description: "Its schema does not compile.",
      inputSchema: { type: "object", properties: { a: { type: "strin" } } } as Tool["inputSchema"],
    });
  }
  const pageSize = Number(flags["page-size"] ?? listed.length);
  server.server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const start = Number(request.params?.cursor ?? 0);
    const end = start + pageSize;
    return { tools: listed.slice(start, end), ...(end < listed.length ? { nextCursor: String(end) } : {}) };
  });
  await server.connect(new StdioServerTransport());
  if (flags.linger) setInterval(() => {}, 60_000);
}

await main();
