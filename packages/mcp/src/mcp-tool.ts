import { annotationTraits, jsonSchemaInput, type Tool, type ToolAnnotations } from "@forkloop/loop-core";
import type { Tool as McpToolInfo } from "@modelcontextprotocol/sdk/types.js";
import type { McpNotice } from "./mcp-notice.js";
import type { ServerConnection } from "./server-connection.js";
import { toResultBlocks } from "./tool-content.js";
import { mcpToolName, toolNameProblem } from "./tool-names.js";
import { limitOutput } from "./tool-output.js";

/** Server-written descriptions go into every request's prompt: bound what one tool may add. */
const MAX_DESCRIPTION_CHARS = 2_048;

export interface McpToolOptions {
  readonly maxOutputTokens: number;
  readonly resultsDir?: string | undefined;
  readonly onNotice?: ((notice: McpNotice) => void) | undefined;
}

/**
 * One MCP tool as a loop-core Tool named `mcp__<server>__<tool>`: its JSON Schema validated with
 * `jsonSchemaInput` and sent as is, its annotations read by `annotationTraits`, its results
 * (text and images) through Claude Code's output limits. A tool that cannot be offered (name
 * over 128 characters, a schema that does not compile) is refused with the reason.
 */
export function mcpTool(
  server: ServerConnection,
  info: McpToolInfo,
  options: McpToolOptions,
): { ok: true; tool: Tool } | { ok: false; reason: string } {
  const name = mcpToolName(server.name, info.name);
  const nameProblem = toolNameProblem(name);
  if (nameProblem !== undefined) return { ok: false, reason: nameProblem };
  const input = jsonSchemaInput(info.inputSchema);
  if (!input.ok) return { ok: false, reason: input.error };
  const title = info.title ?? info.annotations?.title;
  const description = info.description ?? title ?? "";
  // Only the hints that are set: the SDK's type has explicit undefineds.
  const annotations: ToolAnnotations = Object.fromEntries(
    Object.entries(info.annotations ?? {}).filter(([, value]) => value !== undefined),
  );
  return {
    ok: true,
    tool: {
      name,
      description:
        description.length > MAX_DESCRIPTION_CHARS
          ? `${description.slice(0, MAX_DESCRIPTION_CHARS)}… [description cut at ${MAX_DESCRIPTION_CHARS} characters]`
          : description,
      inputSchema: input.inputSchema,
      inputJSONSchema: input.inputJSONSchema,
      annotations,
      mcpOrigin: {
        serverName: server.reportedName ?? server.name,
        toolName: info.name,
        ...(title === undefined ? {} : { title }),
      },
      ...annotationTraits(annotations),
      // The MCP output limits below replace loop-core's per-tool cut (R-C0).
      maxResultSizeChars: Number.POSITIVE_INFINITY,
      async call(args, context) {
        const outcome = await server.call(info.name, args, context.abortController.signal);
        if (!outcome.ok) return { content: outcome.error, isError: true };
        // A successful result's structuredContent is what the model gets, as JSON text, as Claude
        // Code gives it (R-M1, R-X1): it is the server's data, its content a rendering of it.
        const { structuredContent, isError } = outcome.result;
        const structured = isError !== true && structuredContent !== undefined;
        const blocks = structured
          ? [{ type: "text" as const, text: JSON.stringify(structuredContent) }]
          : toResultBlocks(outcome.result);
        const limited = await limitOutput(blocks, isError === true, {
          toolName: name,
          maxOutputTokens: options.maxOutputTokens,
          resultsDir: options.resultsDir,
          joinText: structured || isError === true,
        });
        if (limited.warningTokens !== undefined) {
          options.onNotice?.({ type: "output_warning", tool: name, tokens: limited.warningTokens });
        }
        // Shown as it is: the structured output is Claude Code's `{content, structuredContent}` (R-K2).
        return structured && limited.result.output !== undefined
          ? { ...limited.result, output: { content: limited.result.content, structuredContent } }
          : limited.result;
      },
    },
  };
}
