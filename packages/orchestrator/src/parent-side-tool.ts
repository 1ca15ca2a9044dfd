import type Anthropic from "@anthropic-ai/sdk";
import {
  annotationTraits,
  type JsonSchemaInput,
  jsonSchemaInput,
  type Tool,
  type ToolAnnotations,
} from "@forkloop/loop-core";
import type { SubAgentIo } from "./sub-agent-io.js";

/**
 * Input schemas of parent-side tools, per thread, by their JSON: every fork of a session carries
 * the same parent tools, and compiling a schema costs milliseconds a fork start should not. Each
 * compiles when a fork first calls its tool (R-V2): most forks never call Agent or Skill, and
 * ajv's load and meta-schema compile were most of a cold thread's time to its first request.
 */
const threadSchemas = new Map<string, JsonSchemaInput>();

function inputFor(definition: Anthropic.Messages.Tool): JsonSchemaInput {
  const key = JSON.stringify(definition.input_schema);
  let input = threadSchemas.get(key);
  if (!input) {
    const compiled = jsonSchemaInput(definition.input_schema, { compileOnFirstUse: true });
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
 * the parent's own tool. With the real tool's annotations (MCP tools) it answers isReadOnly and
 * isConcurrencySafe as the real tool does (R-M1); without them it is concurrency-safe (Agent,
 * Skill: each call is its own fork) and not read-only. Results come back whole, images included.
 */
export function parentSideTool(
  definition: Anthropic.Messages.Tool,
  io: SubAgentIo,
  annotations?: ToolAnnotations,
): Tool {
  const { inputSchema, inputJSONSchema } = inputFor(definition);
  const traits =
    annotations === undefined
      ? { isConcurrencySafe: () => true, isReadOnly: () => false }
      : annotationTraits(annotations);
  return {
    name: definition.name,
    description: definition.description ?? "",
    inputSchema,
    inputJSONSchema,
    ...(annotations === undefined ? {} : { annotations }),
    ...traits,
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
