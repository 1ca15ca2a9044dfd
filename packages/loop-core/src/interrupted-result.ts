import type { ToolResult } from "./tool.js";

// R-K2, R-L16: a call the user's interrupt cancelled is answered in Claude Code's words (read from
// Claude Code 2.1.332's streaming tool executor; the running case measured with the Agent SDK
// 0.3.333 in the conformance harness's interrupt program). The model reads them: stop and wait for
// the user, and — for a call that had started — that its effects may already have happened.

/** Claude Code's rejection of a tool call (its REJECT_MESSAGE). */
const REJECTED =
  "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";

/** What Claude Code adds when the call was already running: the rejection text alone would say it never ran. */
const STOPPED_WHILE_RUNNING =
  " Correction to the text above: this call was stopped while running, not refused before it ran. It may have run in part or in full, and its changes may have been written. No permission prompt was involved. Work it started elsewhere (a remote command, a background process) may still be running, so check before starting the same work again. The instruction to stop and wait still stands.";

/** The call's `toolUseResult` (the Agent SDK's `tool_use_result`). */
const USER_REJECTED_TOOL_USE = "User rejected tool use";

/**
 * The result of a call the user's interrupt cancelled: untagged text (not a `<tool_use_error>`),
 * and `User rejected tool use` as its output. `running`: the call had started.
 */
export function interruptedResult(running: boolean): ToolResult {
  return {
    content: running ? REJECTED + STOPPED_WHILE_RUNNING : REJECTED,
    isError: true,
    output: USER_REJECTED_TOOL_USE,
  };
}
