import { randomUUID } from "node:crypto";
import type { HookRunObserver, HookRunReport } from "@forkloop/tools";
import type { SDKHookResponseMessage, SDKHookStartedMessage } from "./agent-sdk-types/other-messages.js";

/**
 * R-X3 `includeHookEvents` (`claude --include-hook-events`): each settings hook command's run as
 * Claude Code prints it — `system/hook_started` as it starts, `system/hook_response` with its
 * output, exit code and outcome as it ends. SessionStart's are printed without it too, as
 * Claude Code's and the Agent SDK's are. A main-agent tool call's come after the assistant
 * message holding the call (`toolUseYielded`), as in Claude Code, though the call may start
 * while that message still streams. SessionEnd's are not printed: its hooks run after the last
 * result, where Claude Code's output has ended.
 */
export function hookRunMessages(
  all: boolean,
  sessionId: string,
  emit: (message: SDKHookStartedMessage | SDKHookResponseMessage) => void,
  toolUseYielded: (toolUseId: string) => Promise<void>,
): HookRunObserver {
  // Each run's lines in order: its response after its start, both after the call's message.
  const runs = new Map<string, Promise<void>>();
  return (report) => {
    if (report.event === "SessionEnd" || (!all && report.event !== "SessionStart")) return;
    const line = message(report, sessionId);
    if (report.phase === "started") {
      if (report.toolUseId === undefined || report.agentId !== undefined) {
        emit(line);
        return;
      }
      runs.set(
        report.id,
        toolUseYielded(report.toolUseId).then(() => emit(line)),
      );
      return;
    }
    const started = runs.get(report.id);
    runs.delete(report.id);
    if (started === undefined) emit(line);
    else void started.then(() => emit(line));
  };
}

function message(report: HookRunReport, sessionId: string): SDKHookStartedMessage | SDKHookResponseMessage {
  const run = {
    hook_id: report.id,
    hook_name: report.name,
    hook_event: report.event,
    uuid: randomUUID(),
    session_id: sessionId,
  };
  if (report.phase === "started") return { type: "system", subtype: "hook_started", ...run };
  const { exitCode, stdout, stderr } = report.result;
  return {
    type: "system",
    subtype: "hook_response",
    ...run,
    output: `${stdout}${stderr}`,
    stdout,
    stderr,
    ...(exitCode === null ? {} : { exit_code: exitCode }),
    outcome: report.cancelled ? "cancelled" : exitCode === 0 ? "success" : "error",
  };
}
