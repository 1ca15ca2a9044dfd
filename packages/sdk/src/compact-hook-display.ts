import type { HookRunReport } from "@forkloop/tools";

type CompactEvent = "PreCompact" | "PostCompact";

function isCompactEvent(event: string): event is CompactEvent {
  return event === "PreCompact" || event === "PostCompact";
}

/**
 * What a `/compact`'s PreCompact and PostCompact hooks said, in Claude Code 2.1.333's words for
 * the command's output: `PreCompact [<command>] completed successfully` (with `: <output>` when
 * it said something) or `… failed`, a program's callback named `callback`, every PreCompact line
 * before the PostCompact ones. Collects only between `start()` and `end()`.
 */
export class CompactHookDisplay {
  #lines: Record<CompactEvent, string[]> | undefined;

  start(): void {
    this.#lines = { PreCompact: [], PostCompact: [] };
  }

  /** The lines so far, one per hook; collecting stops. */
  end(): string {
    const lines = this.#lines;
    this.#lines = undefined;
    return lines === undefined ? "" : [...lines.PreCompact, ...lines.PostCompact].join("\n");
  }

  /** One hook's end: a callback (`callback`) or a settings command (the command's text). */
  ran(event: string, name: string, ok: boolean, said: string | undefined): void {
    if (this.#lines === undefined || !isCompactEvent(event)) return;
    const text = said?.trim() ?? "";
    const outcome = ok ? "completed successfully" : "failed";
    this.#lines[event].push(`${event} [${name}] ${outcome}${text === "" ? "" : `: ${text}`}`);
  }

  /** A settings hook command's run, as the hook-run observer reports it (a cancelled one says nothing). */
  hookRun(report: HookRunReport): void {
    if (report.phase !== "ended" || report.cancelled) return;
    const { command, exitCode, stdout, stderr } = report.result;
    this.ran(report.event, command, exitCode === 0, exitCode === 0 ? stdout : `${stdout}${stderr}`);
  }
}
