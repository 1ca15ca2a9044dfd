import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import type { AgentDefinition } from "./options.js";
import { OptionsError } from "./options-error.js";

/**
 * Values of Claude Code's print-mode flags (R-X3), for `forkloop run` and `extraArgs` alike: JSON
 * given inline or as a file, text files.
 */

/** More than any prompt or definitions file: a flag's file is read whole into memory. */
const FLAG_FILE_MAX_BYTES = 16 * 1024 * 1024;

/**
 * A file a flag names, opened once and judged by what was opened: a regular file of at most
 * FLAG_FILE_MAX_BYTES. A FIFO would block the process for good (no signal is handled while a
 * read blocks it) and /dev/zero would fill the memory until the process aborts; both are bad input,
 * refused with a code the callers name (exit 2).
 */
function readFlagFile(path: string): string {
  // Non-blocking: opening a FIFO with no writer must not wait for one.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw Object.assign(new Error("not a regular file"), { code: "not a regular file" });
    if (stats.size > FLAG_FILE_MAX_BYTES)
      throw Object.assign(new Error("too large"), {
        code: `${stats.size} bytes, more than ${FLAG_FILE_MAX_BYTES}`,
      });
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/** A flag's JSON object, given inline (`{…}`) or as a file (relative to cwd) holding one. */
function jsonObjectFlag(flag: string, value: string, cwd: string, example: string): Record<string, unknown> {
  const inline = value.trimStart().startsWith("{");
  let text = value;
  if (!inline) {
    try {
      text = readFlagFile(resolve(cwd, value));
    } catch (error) {
      throw new OptionsError(
        `${flag}: cannot read ${value} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give a JSON file or the JSON itself, e.g. ${flag} '${example}'.`,
      );
    }
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new OptionsError(
      `${flag}: ${inline ? "not valid JSON" : `${value} is not valid JSON`} (${(error as Error).message}); e.g. ${flag} '${example}'.`,
    );
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new OptionsError(`${flag}: give a JSON object, e.g. ${flag} '${example}'.`);
  }
  return parsed as Record<string, unknown>;
}

/** A text file a flag names (`--system-prompt-file`), relative to cwd. */
export function textFileFlag(flag: string, path: string, cwd: string): string {
  try {
    return readFlagFile(resolve(cwd, path));
  } catch (error) {
    throw new OptionsError(
      `${flag}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); give a readable text file.`,
    );
  }
}

const agentSchema = lazySchema(() =>
  z.strictObject({
    description: z.string().min(1, "give a description (when to use the agent)"),
    prompt: z.string().min(1, "give a prompt (the agent's system prompt)"),
    tools: z.array(z.string()).optional(),
    disallowedTools: z.array(z.string()).optional(),
    model: z.string().min(1).optional(),
    maxTurns: z.number().int().positive().optional(),
  }),
);

const AGENTS_EXAMPLE = '{"reviewer":{"description":"Reviews code","prompt":"You review code."}}';

/** `--agents JSON|FILE`: custom agent types by name, Claude Code's shape. */
export function agentsFlag(value: string, cwd: string): Record<string, AgentDefinition> {
  const object = jsonObjectFlag("--agents", value, cwd, AGENTS_EXAMPLE);
  const agents: Record<string, AgentDefinition> = {};
  for (const [name, definition] of Object.entries(object)) {
    const parsed = agentSchema.safeParse(definition);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new OptionsError(
        `--agents: agent "${name}": ${issue?.path.join(".") || "the definition"}: ${issue?.message}; e.g. --agents '${AGENTS_EXAMPLE}'.`,
      );
    }
    agents[name] = parsed.data as AgentDefinition;
  }
  return agents;
}

const SCHEMA_EXAMPLE = '{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}';

/** `--json-schema SCHEMA`: the JSON Schema the final answer must match (structured output). */
export function jsonSchemaFlag(value: string, cwd: string): Record<string, unknown> {
  return jsonObjectFlag("--json-schema", value, cwd, SCHEMA_EXAMPLE);
}
