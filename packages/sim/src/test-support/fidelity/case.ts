/**
 * The fidelity suite's vocabulary (R-D1, R-D2, R-D4): a case is a request and what the
 * API answers, with the documentation page that says so. `fidelity.test.ts` sends each case twice,
 * through the official SDK and as raw HTTP. Rules come from the pages; the 400s' wording mostly
 * does not (the pages state rules, not messages), so a case checks the status, the error type and
 * `error.details.error_code`, and the message where a page or a client report gives it.
 */
const DOCS = "https://platform.claude.com/docs/en";
export const PAGE = {
  deprecations: `${DOCS}/about-claude/model-deprecations`,
  migration: `${DOCS}/about-claude/models/migration-guide`,
  effort: `${DOCS}/build-with-claude/effort`,
  perMessageEffort: `${DOCS}/build-with-claude/effort-per-message`,
  systemMessages: `${DOCS}/build-with-claude/mid-conversation-system-messages`,
  adaptive: `${DOCS}/build-with-claude/adaptive-thinking`,
  extended: `${DOCS}/build-with-claude/extended-thinking`,
  threads: `${DOCS}/build-with-claude/message-threads`,
  opus5: `${DOCS}/models/opus-5/overview`,
  errors: `${DOCS}/api/errors`,
  structuredOutputs: `${DOCS}/build-with-claude/structured-outputs`,
  citations: `${DOCS}/build-with-claude/citations`,
  files: `${DOCS}/build-with-claude/files`,
  toolSearch: `${DOCS}/agents-and-tools/tool-use/tool-search-tool`,
  mcpConnector: `${DOCS}/agents-and-tools/mcp-connector`,
  vision: `${DOCS}/build-with-claude/vision`,
  webSearch: `${DOCS}/agents-and-tools/tool-use/web-search-tool`,
  webFetch: `${DOCS}/agents-and-tools/tool-use/web-fetch-tool`,
  codeExecution: `${DOCS}/agents-and-tools/tool-use/code-execution-tool`,
  promptCaching: `${DOCS}/build-with-claude/prompt-caching`,
  stopReasons: `${DOCS}/build-with-claude/handling-stop-reasons`,
  pricing: `${DOCS}/about-claude/pricing`,
} as const;

export type ResponseBody = Record<string, unknown>;

export type Expect =
  | {
      status: 200;
      thinkingText?: "empty" | "text";
      /** More checks of a 200's body (citations, server tool blocks, usage). */
      body?: (body: ResponseBody) => void;
    }
  | {
      status: number;
      type: string;
      message?: string | RegExp;
      errorCode?: string;
      /** Fields of `error.details` beside `error_code` (`paths`, `max_side_length_pixels`). */
      details?: Record<string, unknown>;
    };

export interface Case {
  page: string;
  /**
   * Where the expected message comes from when no page states it: a real API error body quoted
   * in public (a client's issue, a live probe's record), by URL.
   */
  source?: string;
  title: string;
  body: Record<string, unknown>;
  betas?: readonly string[];
  /** `anthropic-version` (the SDK's own, 2026-10-21, refuses sampling parameters). */
  version?: string;
  expect: Expect;
}

export const user = (text: string) => ({ role: "user", content: text });
export const assistant = (text: string) => ({ role: "assistant", content: [{ type: "text", text }] });
export const system = (text: string) => ({ role: "system", content: text });
export const base = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 200,
  messages: [user("hello")],
  ...extra,
});
export const ok: Expect = { status: 200 };
export const okWith = (body: (body: ResponseBody) => void): Expect => ({ status: 200, body });
export const bad = (message?: string | RegExp, errorCode?: string): Expect => ({
  status: 400,
  type: "invalid_request_error",
  ...(message === undefined ? {} : { message }),
  ...(errorCode === undefined ? {} : { errorCode }),
});
