import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type ContentBlockParam, estimateTextTokens, type ToolResult } from "@forkloop/loop-core";
import { OUTPUT_WARNING_TOKENS, SAVE_TO_FILE_CHARS } from "./mcp-limits.js";

/** Tokens the API counts for one image (loop-core's estimate, ~1.15 megapixels). */
const IMAGE_TOKENS = 1_600;
const PREVIEW_CHARS = 2_000;

export interface OutputLimitOptions {
  readonly toolName: string;
  readonly maxOutputTokens: number;
  /** Where results too large to show are saved; without it they are refused instead. */
  readonly resultsDir?: string | undefined;
  /** Give the model the text blocks joined into one string (a structured result's JSON text). */
  readonly joinText?: boolean;
}

export interface LimitedOutput {
  readonly result: ToolResult;
  /** Set when the result passed the warning threshold (10,000 tokens) but was still shown. */
  readonly warningTokens?: number;
}

/**
 * Claude Code's MCP output rules (R-M1): a successful result without images that is over
 * 50,000 characters, or over MAX_MCP_OUTPUT_TOKENS, is saved to a file and the model gets its path
 * and a preview (nothing is lost, and Read/Grep can page through it). What cannot be saved (error
 * results, images, no results directory, a failed write) and is over the cap becomes an error
 * with Claude Code's wording. A result over 10,000 tokens that is shown is reported as a warning.
 */
export async function limitOutput(
  blocks: readonly ContentBlockParam[],
  isError: boolean,
  options: OutputLimitOptions,
): Promise<LimitedOutput> {
  const texts = blocks.flatMap((block) => (block.type === "text" ? [block.text] : []));
  const images = blocks.length - texts.length;
  const allText = texts.join("\n");
  const tokens = estimateTextTokens(allText) + images * IMAGE_TOKENS;
  const overCap = tokens > options.maxOutputTokens;
  let saveFailure: string | undefined;
  if (!isError && images === 0 && (allText.length > SAVE_TO_FILE_CHARS || overCap) && options.resultsDir) {
    const saved = await saveResult(allText, options.resultsDir, options.toolName);
    if (saved.ok) return { result: { content: savedNotice(allText, tokens, saved.path, options.toolName) } };
    saveFailure = saved.error;
  }
  if (overCap) {
    const note = saveFailure === undefined ? "" : ` (saving it to a file failed: ${saveFailure})`;
    return {
      result: {
        isError: true,
        content: `MCP tool "${options.toolName}" response (${tokens} tokens) exceeds maximum allowed tokens (${options.maxOutputTokens})${note}. Ask for less: use the tool's pagination, filtering or limit parameters.`,
      },
    };
  }
  // The server's blocks as they came, as Claude Code gives an MCP result to the model (R-K2);
  // one text block made of structured content stays a string, as Claude Code's JSON text.
  const content = options.joinText === true ? allText : [...blocks];
  return {
    // The server's content blocks are the call's structured output, as Claude Code's (R-K2, R-M1).
    result: { content, ...(isError ? { isError: true } : { output: [...blocks] }) },
    ...(tokens > OUTPUT_WARNING_TOKENS ? { warningTokens: tokens } : {}),
  };
}

async function saveResult(
  text: string,
  dir: string,
  toolName: string,
): Promise<{ ok: true; path: string } | { ok: false; error: string }> {
  // The file name comes from the tool name (already [A-Za-z0-9_-]) and a fresh uuid, never from
  // anything the model or the server chose freely.
  const path = join(dir, `${toolName}-${randomUUID()}.txt`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFile(path, text, { mode: 0o600, flag: "wx" });
    return { ok: true, path };
  } catch (error) {
    return { ok: false, error: (error as NodeJS.ErrnoException).code ?? String(error) };
  }
}

function savedNotice(text: string, tokens: number, path: string, toolName: string): string {
  return [
    `The result of ${toolName} is too large to show here (${text.length} characters, about ${tokens} tokens).`,
    `It is saved in full to ${path}`,
    "Read it in parts (Read with offset and limit) or search it with Grep.",
    "",
    `The first ${Math.min(PREVIEW_CHARS, text.length)} characters:`,
    text.slice(0, PREVIEW_CHARS),
  ].join("\n");
}
