import type Anthropic from "@anthropic-ai/sdk";
import { type JsonSchemaInput, jsonSchemaInput, type Tool } from "@forkloop/loop-core";
import type { SubAgentIo } from "./sub-agent-runner.js";

/**
 * Compiled input schemas of parent-side tools, per thread, by their JSON: every fork of a session
 * carries the same parent tools, and compiling a schema costs milliseconds a fork start should not.
 */
const threadSchemas = new Map<string, JsonSchemaInput>();

function inputFor(definition: Anthropic.Messages.Tool): JsonSchemaInput {
  const key = JSON.stringify(definition.input_schema);
  let input = threadSchemas.get(key);
  if (!input) {
    const compiled = jsonSchemaInput(definition.input_schema);
    // The schema is the parent's own tool definition, already accepted there: failing is a bug.
    if (!compiled.ok) throw new Error(`parent tool ${definition.name}: ${compiled.error}`);
    input = compiled;
    threadSchemas.set(key, input);
  }
  return input;
}

/**
 * A tool that runs in the parent. Its definition is the parent's JSON Schema as is, so the fork's
 * tools prefix stays byte-identical (R-F3); input is validated with that schema here and again by
 * the parent's own tool.
 */
export function parentSideTool(definition: Anthropic.Messages.Tool, io: SubAgentIo): Tool {
  const { inputSchema, inputJSONSchema } = inputFor(definition);
  return {
    name: definition.name,
    description: definition.description ?? "",
    inputSchema,
    inputJSONSchema,
    isConcurrencySafe: () => true,
    isReadOnly: () => false,
    maxResultSizeChars: 100_000,
    async call(input, context) {
      const result = await io.callParentTool(definition.name, input, {
        toolUseId: context.toolUseId,
        agentId: context.agentId,
      });
      return { content: result.content, isError: result.isError };
    },
  };
}
