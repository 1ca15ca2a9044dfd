import { randomBytes } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import { writeFileAtomicSync } from "../atomic-write.js";
import {
  absolutePath,
  defineTool,
  fsErrorCode,
  recordWritten,
  staleWriteRefusal,
  toolError,
} from "../tool-kit.js";
import { realWorkspaceRoots, resolveInWorkspace } from "../workspace-paths.js";

interface NotebookCell {
  id?: string;
  cell_type: string;
  source: string | string[];
  metadata?: Record<string, unknown>;
  outputs?: unknown[];
  execution_count?: number | null;
  [key: string]: unknown;
}

interface Notebook {
  cells: NotebookCell[];
  nbformat?: number;
  nbformat_minor?: number;
  [key: string]: unknown;
}

/** A cell's id as Read shows it: its own `id`, else `cell-N` (nbformat before 4.5 has no ids). */
function cellIdOf(cell: NotebookCell, index: number): string {
  return typeof cell.id === "string" && cell.id.length > 0 ? cell.id : `cell-${index}`;
}

/** nbformat's multi-line source: one string per line, each but the last ending in "\n". */
function sourceLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n").map((line) => `${line}\n`);
  const last = lines.length - 1;
  lines[last] = (lines[last] as string).slice(0, -1);
  return lines[last] === "" ? lines.slice(0, -1) : lines;
}

/** The parsed notebook, or why the file is not one (R-T7: a notebook that is not JSON is a tool error). */
export function parseNotebook(text: string, path: string): Notebook | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return `${path} is not valid JSON (${(error as Error).message}), so it is not a notebook NotebookEdit can change. Fix or rewrite the file first.`;
  }
  const cells = (parsed as { cells?: unknown } | null)?.cells;
  if (
    typeof parsed !== "object" ||
    parsed === null ||
    !Array.isArray(cells) ||
    !cells.every((cell) => typeof cell === "object" && cell !== null && typeof cell.cell_type === "string")
  ) {
    return `${path} is JSON but not a Jupyter notebook (no "cells" array of cells with a cell_type).`;
  }
  return parsed as Notebook;
}

/**
 * Claude Code's NotebookEdit (R-T7): replaces, inserts or deletes one cell of a `.ipynb`, by the
 * cell id Read shows. Like Write/Edit: the notebook must have been read and be unchanged since,
 * it is written whole (a new file renamed over it, in its directory as opened from the workspace
 * root), and the result stays valid nbformat (a code cell's outputs and execution count are
 * cleared when its source changes; inserted cells get ids when the format has them).
 */
export const notebookEditTool = defineTool({
  name: "NotebookEdit",
  description:
    "Replaces, inserts, or deletes a single cell in a Jupyter notebook (.ipynb file).\n\nUsage:\n" +
    "- You must use the Read tool on the notebook in this conversation before editing — this tool will fail otherwise.\n" +
    "- `notebook_path` must be an absolute path.\n" +
    '- `cell_id` is the `id` attribute shown in the Read tool\'s `<cell id="...">` output. It is required for `replace` and `delete`.\n' +
    "- `edit_mode` defaults to `replace`. Use `insert` to add a new cell after the cell with the given `cell_id` (or at the beginning of the notebook if `cell_id` is omitted) — `cell_type` is required when inserting. Use `delete` to remove the cell.",
  inputSchema: lazySchema(() =>
    z
      .object({
        notebook_path: z
          .string()
          .describe(
            "The absolute path to the Jupyter notebook file to edit (must be absolute, not relative)",
          ),
        cell_id: z
          .string()
          .optional()
          .describe(
            "The ID of the cell to edit. When inserting a new cell, the new cell will be inserted after the cell with this ID, or at the beginning if not specified.",
          ),
        new_source: z.string().describe("The new source for the cell"),
        cell_type: z
          .enum(["code", "markdown"])
          .optional()
          .describe(
            "The type of the cell (code or markdown). If not specified, it defaults to the current cell type. If using edit_mode=insert, this is required.",
          ),
        edit_mode: z
          .enum(["replace", "insert", "delete"])
          .optional()
          .describe("The type of edit to make (replace, insert, delete). Defaults to replace."),
      })
      .strict(),
  ),
  isConcurrencySafe: () => false,
  isReadOnly: () => false,
  maxResultSizeChars: 100_000,
  backfillInput: (input, context) => ({
    ...input,
    notebook_path: absolutePath(input.notebook_path, context.cwd),
  }),
  async call(input, context) {
    const resolved = resolveInWorkspace(input.notebook_path, context);
    if (!resolved.ok) return toolError(resolved.error);
    const path = resolved.path;
    if (!path.endsWith(".ipynb")) {
      return toolError(`${path} is not a Jupyter notebook (.ipynb); use Edit for other files.`);
    }
    let text: string;
    try {
      const stats = await stat(path);
      const refusal = staleWriteRefusal(context.agentState, path, stats);
      if (refusal !== undefined) return toolError(refusal);
      text = await readFile(path, "utf8");
    } catch (error) {
      return toolError(
        fsErrorCode(error) === "ENOENT"
          ? `Notebook does not exist: ${path}`
          : `Cannot read ${path}: ${fsErrorCode(error)}`,
      );
    }
    const notebook = parseNotebook(text, path);
    if (typeof notebook === "string") return toolError(notebook);
    const mode = input.edit_mode ?? "replace";
    const index =
      input.cell_id === undefined
        ? -1
        : notebook.cells.findIndex((cell, at) => cellIdOf(cell, at) === input.cell_id);
    if (input.cell_id !== undefined && index === -1) {
      return toolError(`Cell with ID "${input.cell_id}" not found in ${path}.`);
    }
    let message: string;
    if (mode === "insert") {
      if (input.cell_type === undefined) return toolError("cell_type is required when edit_mode is insert.");
      const withIds =
        (notebook.nbformat ?? 4) > 4 ||
        ((notebook.nbformat ?? 4) === 4 && (notebook.nbformat_minor ?? 0) >= 5);
      const id = randomBytes(4).toString("hex");
      const cell: NotebookCell = {
        cell_type: input.cell_type,
        ...(withIds ? { id } : {}),
        metadata: {},
        source: sourceLines(input.new_source),
        ...(input.cell_type === "code" ? { outputs: [], execution_count: null } : {}),
      };
      notebook.cells.splice(index + 1, 0, cell);
      message = `Inserted cell ${withIds ? id : `cell-${index + 1}`} with ${input.new_source}`;
    } else {
      if (input.cell_id === undefined) return toolError(`cell_id is required when edit_mode is ${mode}.`);
      if (mode === "delete") {
        notebook.cells.splice(index, 1);
        message = `Deleted cell ${input.cell_id}`;
      } else {
        const cell = notebook.cells[index] as NotebookCell;
        const type = input.cell_type ?? cell.cell_type;
        cell.source = sourceLines(input.new_source);
        cell.cell_type = type;
        if (type === "code") {
          // The old outputs belong to the old source.
          cell.outputs = [];
          cell.execution_count = null;
        } else {
          delete cell.outputs;
          delete cell.execution_count;
        }
        message = `Updated cell ${input.cell_id} with ${input.new_source}`;
      }
    }
    // Jupyter writes one-space indentation and a final newline; keep what the file had.
    const indent = /^\{\n( +)"/.exec(text)?.[1]?.length ?? 1;
    try {
      writeFileAtomicSync(path, Buffer.from(`${JSON.stringify(notebook, null, indent)}\n`), {
        beneath: realWorkspaceRoots(context.workspaceRoots),
      });
    } catch (error) {
      return toolError(`Cannot write ${path}: ${fsErrorCode(error)}`);
    }
    recordWritten(context.agentState, path);
    return { content: message };
  },
});

/** Output text Read shows per cell; the rest is cut (outputs can be megabytes of logs). */
const CELL_OUTPUT_CHARS = 2_000;

/**
 * A notebook as Read shows it (R-T7): each cell in `<cell id="…">` tags with its type (markdown)
 * and source, then its text outputs — the ids NotebookEdit takes.
 */
export function renderNotebook(notebook: Notebook): string {
  return notebook.cells
    .map((cell, index) => {
      const id = cellIdOf(cell, index);
      const source = Array.isArray(cell.source) ? cell.source.join("") : String(cell.source ?? "");
      const type = cell.cell_type === "code" ? "" : `<cell_type>${cell.cell_type}</cell_type>`;
      const outputs = (cell.outputs ?? [])
        .map(outputText)
        .filter((part) => part.length > 0)
        .join("\n");
      const shown =
        outputs.length > CELL_OUTPUT_CHARS
          ? `${outputs.slice(0, CELL_OUTPUT_CHARS)}… [${outputs.length - CELL_OUTPUT_CHARS} more characters of output]`
          : outputs;
      return `<cell id="${id}">${type}${source}${shown === "" ? "" : `\n<outputs>\n${shown}\n</outputs>`}</cell id="${id}">`;
    })
    .join("\n");
}

function outputText(output: unknown): string {
  const value = output as { text?: unknown; data?: Record<string, unknown>; ename?: string; evalue?: string };
  const join = (part: unknown) =>
    Array.isArray(part) ? part.join("") : typeof part === "string" ? part : "";
  if (value.text !== undefined) return join(value.text);
  if (value.ename !== undefined) return `${value.ename}: ${value.evalue ?? ""}`;
  const data = value.data ?? {};
  if (data["text/plain"] !== undefined) return join(data["text/plain"]);
  const image = Object.keys(data).find((type) => type.startsWith("image/"));
  return image === undefined ? "" : `[${image} output]`;
}
