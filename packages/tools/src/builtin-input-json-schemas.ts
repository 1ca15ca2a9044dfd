// Written by scripts/tool-input-json-schemas.mjs from the built-in tools' zod input schemas: do not edit.
import type { JsonSchemaObject } from "@forkloop/loop-core";

/**
 * Each built-in tool's input as the API is sent it (`z.toJSONSchema(inputSchema, { io: "input" })`),
 * computed ahead: a session's first request builds none of the tools' zod schemas (R-V2).
 * builtin-tools.test.ts checks each against its schema.
 */
export const BUILTIN_INPUT_JSON_SCHEMAS: Readonly<Record<string, JsonSchemaObject>> = {
  Bash: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      command: {
        description: "The command to run",
        type: "string",
        minLength: 1,
      },
      timeout: {
        description: "Timeout in milliseconds (max 600000 for a foreground command)",
        type: "number",
        minimum: 1,
        maximum: 7200000,
      },
      description: {
        description: "What the command does, in 5-10 words",
        type: "string",
      },
      run_in_background: {
        description:
          "Set to true to run this command in the background. With it, `timeout` limits how long the command may run in the background before it is stopped (default 600000 ms, max 7200000 ms).",
        type: "boolean",
      },
      dangerouslyDisableSandbox: {
        description:
          "Claude Code's request to run the command outside the sandbox. forkloop never does: with the sandbox on, a call that sets this is refused (only the user turns the sandbox off); with it off, it changes nothing.",
        type: "boolean",
      },
    },
    required: ["command"],
  },
  Edit: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      file_path: {
        description: "The path of the file to modify (absolute, or relative to the working directory)",
        type: "string",
      },
      old_string: {
        description: "The exact text to replace (must be unique in the file unless replace_all)",
        type: "string",
      },
      new_string: {
        description: "The text to replace it with (must differ from old_string)",
        type: "string",
      },
      replace_all: {
        description: "Replace every occurrence of old_string (default false)",
        default: false,
        type: "boolean",
      },
    },
    required: ["file_path", "old_string", "new_string"],
  },
  Glob: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      pattern: {
        description: "The glob pattern to match files against",
        type: "string",
        minLength: 1,
      },
      path: {
        description: "The directory to search in (default: the working directory)",
        type: "string",
      },
    },
    required: ["pattern"],
  },
  Grep: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      pattern: {
        description: "The regular expression to search for in file contents",
        type: "string",
        minLength: 1,
      },
      path: {
        description: "File or directory to search in (default: the working directory)",
        type: "string",
      },
      glob: {
        description: 'Glob filter for files, e.g. "*.js" or "*.{ts,tsx}" (rg --glob)',
        type: "string",
      },
      type: {
        description: "File type to search (rg --type), e.g. js, py, rust, go, java",
        type: "string",
      },
      output_mode: {
        description:
          '"content" shows matching lines, "files_with_matches" (default) file paths, "count" match counts',
        type: "string",
        enum: ["content", "files_with_matches", "count"],
      },
      "-i": {
        description: "Case insensitive search",
        type: "boolean",
      },
      "-n": {
        description: "Show line numbers (content mode; default true)",
        type: "boolean",
      },
      "-o": {
        description:
          "Print only the matched (non-empty) parts of each matching line, one per output line (content mode)",
        type: "boolean",
      },
      "-A": {
        description: "Lines to show after each match (content mode)",
        type: "number",
        minimum: 0,
      },
      "-B": {
        description: "Lines to show before each match (content mode)",
        type: "number",
        minimum: 0,
      },
      "-C": {
        description: "Alias for context.",
        type: "number",
        minimum: 0,
      },
      context: {
        description: "Lines to show before and after each match (content mode)",
        type: "number",
        minimum: 0,
      },
      head_limit: {
        description: "Show only the first N lines / files / count entries; 0 for no limit",
        type: "number",
        minimum: 0,
      },
      offset: {
        description: "Skip the first N lines / files / count entries before applying head_limit (default 0)",
        type: "number",
        minimum: 0,
      },
      multiline: {
        description: "Let patterns span lines; . matches newlines (rg -U --multiline-dotall)",
        type: "boolean",
      },
    },
    required: ["pattern"],
  },
  LS: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      path: {
        description: "The directory to list (absolute, or relative to the working directory)",
        type: "string",
      },
      ignore: {
        description: 'Glob patterns to skip, e.g. ["*.log", "dist"]',
        type: "array",
        items: {
          type: "string",
        },
      },
    },
    required: ["path"],
  },
  NotebookEdit: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      notebook_path: {
        description:
          "The absolute path to the Jupyter notebook file to edit (must be absolute, not relative)",
        type: "string",
      },
      cell_id: {
        description:
          "The ID of the cell to edit. When inserting a new cell, the new cell will be inserted after the cell with this ID, or at the beginning if not specified.",
        type: "string",
      },
      new_source: {
        description: "The new source for the cell",
        type: "string",
      },
      cell_type: {
        description:
          "The type of the cell (code or markdown). If not specified, it defaults to the current cell type. If using edit_mode=insert, this is required.",
        type: "string",
        enum: ["code", "markdown"],
      },
      edit_mode: {
        description: "The type of edit to make (replace, insert, delete). Defaults to replace.",
        type: "string",
        enum: ["replace", "insert", "delete"],
      },
    },
    required: ["notebook_path", "new_source"],
    additionalProperties: false,
  },
  Read: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      file_path: {
        description: "The path of the file to read (absolute, or relative to the working directory)",
        type: "string",
      },
      offset: {
        description:
          "The line number to start reading from (1-based). Only provide if the file is too large to read at once",
        type: "integer",
        minimum: 0,
        maximum: 9007199254740991,
      },
      limit: {
        description: "The number of lines to read (default 2000)",
        type: "integer",
        minimum: 1,
        maximum: 9007199254740991,
      },
      pages: {
        description:
          'Page range for PDF files (e.g., "1-5", "3", "10-20"). Only applicable to PDF files. Maximum 20 pages per request.',
        type: "string",
        maxLength: 32,
      },
      allow_large: {
        description:
          "Set to true to read a text file, or a line range of one, that is over the usual limits (2000 lines, 2000 characters a line), up to 400000 characters. Only use this when you genuinely need all of it or the user asked for the whole file; otherwise read it in parts with offset and limit, or search it.",
        type: "boolean",
      },
    },
    required: ["file_path"],
  },
  TaskStop: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      task_id: {
        description: "The ID of the background task to stop",
        type: "string",
      },
      shell_id: {
        description: "Deprecated: use task_id instead",
        type: "string",
      },
    },
    additionalProperties: false,
  },
  TodoWrite: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      todos: {
        description: "The updated todo list",
        type: "array",
        items: {
          type: "object",
          properties: {
            content: {
              description: "The task, imperative form (e.g. Run the tests)",
              type: "string",
              minLength: 1,
            },
            status: {
              type: "string",
              enum: ["pending", "in_progress", "completed"],
            },
            activeForm: {
              description: "Present continuous form shown while running (e.g. Running the tests)",
              type: "string",
              minLength: 1,
            },
          },
          required: ["content", "status"],
        },
      },
    },
    required: ["todos"],
  },
  WebFetch: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      url: {
        description: "The URL to fetch content from",
        type: "string",
        format: "uri",
      },
      prompt: {
        description: "The prompt to run on the fetched content",
        type: "string",
      },
      offset: {
        description:
          "Character position in the page text to start reading from. Use it to read on through a page too long for one call, with the value the previous result gave.",
        type: "integer",
        minimum: 0,
        maximum: 9007199254740991,
      },
    },
    required: ["url", "prompt"],
    additionalProperties: false,
  },
  WebSearch: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      query: {
        description: "The search query to use",
        type: "string",
        minLength: 2,
        maxLength: 2000,
      },
      allowed_domains: {
        description: "Only include search results from these domains",
        maxItems: 100,
        type: "array",
        items: {
          type: "string",
          minLength: 1,
          maxLength: 253,
        },
      },
      blocked_domains: {
        description: "Never include search results from these domains",
        maxItems: 100,
        type: "array",
        items: {
          type: "string",
          minLength: 1,
          maxLength: 253,
        },
      },
    },
    required: ["query"],
    additionalProperties: false,
  },
  Write: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      file_path: {
        description: "The path of the file to write (absolute, or relative to the working directory)",
        type: "string",
      },
      content: {
        description: "The full content to write to the file",
        type: "string",
      },
    },
    required: ["file_path", "content"],
  },
};
