import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { callTool, resultText, useTempWorkspace } from "../testing/index.js";
import { notebookEditTool } from "./notebook-edit.js";
import { readTool } from "./read.js";

const ws = useTempWorkspace();

const NOTEBOOK = {
  cells: [
    { cell_type: "markdown", id: "intro", metadata: {}, source: ["# Title\n", "text"] },
    {
      cell_type: "code",
      id: "calc",
      metadata: {},
      execution_count: 3,
      source: ["x = 1\n", "print(x)"],
      outputs: [{ output_type: "stream", name: "stdout", text: ["1\n"] }],
    },
  ],
  metadata: { kernelspec: { name: "python3" } },
  nbformat: 4,
  nbformat_minor: 5,
};

function notebook(content: unknown = NOTEBOOK): string {
  const path = join(ws.root, "analysis.ipynb");
  writeFileSync(path, typeof content === "string" ? content : `${JSON.stringify(content, null, 1)}\n`);
  return path;
}
const saved = (path: string) => JSON.parse(readFileSync(path, "utf8")) as typeof NOTEBOOK;

describe("NotebookEdit and Read of notebooks", () => {
  it("R-T7: Read shows the cells with the ids NotebookEdit takes; replace changes one cell and clears its outputs", async () => {
    const path = notebook();
    const context = ws.context();
    const read = resultText(await callTool(readTool, { file_path: path }, context));
    expect(read).toBe(
      '<cell id="intro"><cell_type>markdown</cell_type># Title\ntext</cell id="intro">\n' +
        '<cell id="calc">x = 1\nprint(x)\n<outputs>\n1\n\n</outputs></cell id="calc">',
    );
    const result = await callTool(
      notebookEditTool,
      { notebook_path: path, cell_id: "calc", new_source: "x = 2\nprint(x * 2)" },
      context,
    );
    expect(resultText(result)).toBe("Updated cell calc with x = 2\nprint(x * 2)");
    const after = saved(path);
    expect(after.cells[1]).toEqual({
      cell_type: "code",
      id: "calc",
      metadata: {},
      execution_count: null,
      source: ["x = 2\n", "print(x * 2)"],
      outputs: [],
    });
    expect(after.metadata).toEqual(NOTEBOOK.metadata);
    // Still one-space JSON with a final newline, as Jupyter writes it.
    expect(readFileSync(path, "utf8")).toMatch(/^\{\n "cells": \[/);
    expect(readFileSync(path, "utf8").endsWith("}\n")).toBe(true);
  });

  it("R-T7: insert after a cell (and at the start), delete; ids for nbformat 4.5", async () => {
    const path = notebook();
    const context = ws.context();
    await callTool(readTool, { file_path: path }, context);
    const inserted = await callTool(
      notebookEditTool,
      {
        notebook_path: path,
        cell_id: "intro",
        new_source: "## Setup",
        cell_type: "markdown",
        edit_mode: "insert",
      },
      context,
    );
    expect(resultText(inserted)).toMatch(/^Inserted cell [0-9a-f]{8} with ## Setup$/);
    await callTool(
      notebookEditTool,
      { notebook_path: path, new_source: "import os", cell_type: "code", edit_mode: "insert" },
      context,
    );
    const deleted = await callTool(
      notebookEditTool,
      { notebook_path: path, cell_id: "calc", new_source: "", edit_mode: "delete" },
      context,
    );
    expect(resultText(deleted)).toBe("Deleted cell calc");
    const cells = saved(path).cells;
    expect(cells.map((cell) => [cell.cell_type, cell.source])).toEqual([
      ["code", ["import os"]],
      ["markdown", ["# Title\n", "text"]],
      ["markdown", ["## Setup"]],
    ]);
    expect(cells[0]).toMatchObject({ outputs: [], execution_count: null, metadata: {} });
  });

  it("R-T7: bad input is a tool error and the file is untouched — not JSON, not a notebook, unread, unknown cell, insert without a type", async () => {
    const context = ws.context();
    const broken = notebook("{ not json");
    await callTool(readTool, { file_path: broken }, context);
    const notJson = await callTool(
      notebookEditTool,
      { notebook_path: broken, cell_id: "a", new_source: "x" },
      context,
    );
    expect(notJson.isError).toBe(true);
    expect(resultText(notJson)).toMatch(/is not valid JSON/);
    expect(readFileSync(broken, "utf8")).toBe("{ not json");

    const notNotebook = notebook({ cells: "no" });
    await callTool(readTool, { file_path: notNotebook }, context);
    expect(
      resultText(
        await callTool(
          notebookEditTool,
          { notebook_path: notNotebook, cell_id: "a", new_source: "x" },
          context,
        ),
      ),
    ).toMatch(/not a Jupyter notebook/);

    const path = notebook();
    const unread = await callTool(
      notebookEditTool,
      { notebook_path: path, cell_id: "calc", new_source: "x" },
      ws.context(),
    );
    expect(resultText(unread)).toMatch(/has not been read yet/);
    await callTool(readTool, { file_path: path }, context);
    expect(
      resultText(
        await callTool(notebookEditTool, { notebook_path: path, cell_id: "nope", new_source: "x" }, context),
      ),
    ).toBe(`Cell with ID "nope" not found in ${path}.`);
    expect(
      resultText(
        await callTool(
          notebookEditTool,
          { notebook_path: path, new_source: "x", edit_mode: "insert" },
          context,
        ),
      ),
    ).toBe("cell_type is required when edit_mode is insert.");
    expect(saved(path)).toEqual(NOTEBOOK);
  });
});
