import { randomBytes, randomUUID } from "node:crypto";
import { closeSync, mkdtempSync, openSync, realpathSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentState, QueuedCommand } from "@forkloop/loop-core";

/** Shells one agent may have running at once; one more is refused with the list (R-T4). */
const BACKGROUND_SHELLS_MAX_RUNNING = 8;
/** Bytes of output a shell's file keeps; the rest is counted, not written (R-T4: no flooding the disk). */
export const BACKGROUND_OUTPUT_MAX_BYTES = 8 * 1024 * 1024;
/** Ended shells still listed (and their files kept) per agent; the oldest go first. */
const ENDED_SHELLS_KEPT = 32;

export type BackgroundShellStatus = "running" | "completed" | "failed" | "stopped";

/**
 * What runs: a Bash command, or a sub-agent started with the Agent tool's `run_in_background`
 * (R-T5). Claude Code's task types; TaskStop answers with it.
 */
export type BackgroundTaskKind = "local_bash" | "local_agent";

/** Characters of a sub-agent's report a notice carries; the whole report is in its output file. */
const NOTICE_RESULT_MAX_CHARS = 100_000;

/** What the session and the model know of one background shell. */
export interface BackgroundShellInfo {
  readonly id: string;
  readonly kind: BackgroundTaskKind;
  readonly command: string;
  readonly description: string;
  /** The Bash call that started it. */
  readonly toolUseId: string;
  readonly outputFile: string;
  readonly status: BackgroundShellStatus;
  readonly exitCode: number | null;
  readonly startedAt: number;
  readonly endedAt: number | undefined;
  /** Output bytes the command printed beyond BACKGROUND_OUTPUT_MAX_BYTES (not in the file). */
  readonly droppedBytes: number;
}

/** A shell's end, for the agent that started it: Claude Code's task notification. */
export interface BackgroundTaskNotice {
  readonly taskId: string;
  readonly toolUseId: string;
  readonly outputFile: string;
  readonly status: Exclude<BackgroundShellStatus, "running">;
  readonly summary: string;
  /** A sub-agent's report (its final answer), as Claude Code's notice carries it. */
  readonly result?: string | undefined;
}

/**
 * A task's start or end, as it happens (R-T4, R-K2): what a host prints as Claude Code's task
 * messages (task_started, task_updated, task_notification, background_tasks_changed). An end
 * comes whether or not the agent is told (`notified`: false after TaskStop or the owner's stop).
 */
export type BackgroundTaskEvent =
  | { readonly type: "started"; readonly task: BackgroundShellInfo }
  | {
      readonly type: "ended";
      readonly task: BackgroundShellInfo;
      /** The notice's summary ("Background command "…" completed (exit code 0)"). */
      readonly summary: string;
      readonly notified: boolean;
    };

/** How the run ended, as the launcher reports it (bash.ts's runBashCommand). */
export interface BackgroundRunEnd {
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  /** Why the command could not run at all (no sandbox…). */
  readonly error?: string;
  /** Lines the sandbox added (execution points moved aside). */
  readonly notes?: readonly string[];
  /** A sub-agent's report, for its notice (its output file has it too). */
  readonly result?: string;
}

export interface BackgroundShellStart {
  /** Default local_bash. */
  readonly kind?: BackgroundTaskKind;
  /** The task's id (a sub-agent's is its agent id, so stopTask and TaskStop name it alike); default: made here. */
  readonly id?: string;
  readonly command: string;
  readonly description?: string | undefined;
  readonly toolUseId: string;
  readonly timeoutMs: number;
  /**
   * R-T5: delivers a message to the running task (a background sub-agent reads it before its
   * next request, as SendMessage's); absent for a shell, which takes no messages.
   */
  readonly send?: (message: string) => void;
  /** Output bytes not kept before the task came here (a foreground call moved while it ran, R-T5). */
  readonly droppedBytes?: number;
  /** Runs the command; resolves once it and every process it started have ended. */
  readonly run: (limits: {
    readonly timeoutMs: number;
    readonly signal: AbortSignal;
    readonly onOutput: (chunk: string) => void;
  }) => Promise<BackgroundRunEnd>;
}

interface Entry {
  info: BackgroundShellInfo;
  readonly send: ((message: string) => void) | undefined;
  readonly abort: AbortController;
  readonly done: Promise<void>;
  /** Stopped by TaskStop or the owner: no notice (the stopper already knows). */
  quiet: boolean;
}

/**
 * One agent's background shells (R-T4): Bash calls with `run_in_background` that keep running
 * across turns. Each writes its output (stdout and stderr as they come) to a file of its own in a
 * private directory (0700) the Read tool may read; TaskStop, a timeout, or the owner's `stopAll`
 * (the session's end, a sub-agent's or batch item's end) ends its whole process tree — the same
 * process group and marks a foreground call has, so what the stop returns after is gone. When a
 * shell ends on its own (or by its timeout) a notice is queued for the agent.
 */
export class BackgroundShells {
  readonly #entries = new Map<string, Entry>();
  readonly #notices: BackgroundTaskNotice[] = [];
  readonly #listeners = new Set<() => void>();
  readonly #taskListeners = new Set<(event: BackgroundTaskEvent) => void>();
  /** Finished sub-agents a message resumes (SendMessage), by agent id: each starts its task again. */
  readonly #resumable = new Map<string, (message: string) => BackgroundShellInfo | string>();
  /** Foreground calls that can move here (query().backgroundTasks()), by tool_use id. */
  readonly #movable = new Map<string, () => boolean>();
  readonly #maxRunning: number;
  readonly #maxOutputBytes: number;
  #dir: string | undefined;
  #closed = false;
  #endsWithAnswer = false;

  constructor(options: { readonly maxRunning?: number; readonly maxOutputBytes?: number } = {}) {
    this.#maxRunning = options.maxRunning ?? BACKGROUND_SHELLS_MAX_RUNNING;
    this.#maxOutputBytes = options.maxOutputBytes ?? BACKGROUND_OUTPUT_MAX_BYTES;
  }

  /**
   * A sub-agent's shells (R-T4, R-X1): they are stopped when it gives its final answer and no
   * notice reaches it after that, as Claude Code's; a start tells the model so.
   */
  endWithFinalAnswer(): void {
    this.#endsWithAnswer = true;
  }

  /** Whether the owner's final answer ends these shells (a sub-agent's), so no notice can follow it. */
  get endsWithFinalAnswer(): boolean {
    return this.#endsWithAnswer;
  }

  /** Starts a shell; a string is why it was refused. */
  start(spec: BackgroundShellStart): BackgroundShellInfo | string {
    if (this.#closed) return "This agent has ended; no background command can start.";
    const running = this.list().filter((shell) => shell.status === "running");
    if (running.length >= this.#maxRunning) {
      return (
        `${running.length} background commands are already running, the most one agent may have ` +
        `(${running.map((shell) => shell.id).join(", ")}). Stop one with TaskStop, or wait for one to end.`
      );
    }
    const id =
      spec.id ?? `b${randomBytes(6).toString("base64url").replace(/[-_]/g, "x").toLowerCase().slice(0, 8)}`;
    const previous = this.#entries.get(id);
    // A resumed sub-agent (R-T5) runs again under its id: its ended run's entry and file give way.
    const replaces = previous?.info.kind === "local_agent" && previous.info.status !== "running";
    if (!/^[\w-]{1,64}$/.test(id) || (previous !== undefined && !replaces))
      return `A background task id must be new and plain: ${id}`;
    if (previous !== undefined) {
      this.#entries.delete(id);
      rmSync(previous.info.outputFile, { force: true });
    }
    const kind = spec.kind ?? "local_bash";
    const outputFile = join(this.#directory(), `${id}.output`);
    // O_EXCL in a directory only this user can enter: the file is the one we made.
    const fd = openSync(outputFile, "wx", 0o600);
    let written = 0;
    let dropped = spec.droppedBytes ?? 0;
    const write = (text: string): void => {
      const bytes = Buffer.from(text);
      const room = this.#maxOutputBytes - written;
      if (room <= 0) {
        dropped += bytes.length;
        return;
      }
      const kept = bytes.length <= room ? bytes : bytes.subarray(0, room);
      writeSync(fd, kept);
      written += kept.length;
      dropped += bytes.length - kept.length;
    };
    const abort = new AbortController();
    const startedAt = Date.now();
    const entry: Entry = {
      info: {
        id,
        kind,
        command: spec.command,
        description: spec.description ?? spec.command,
        toolUseId: spec.toolUseId,
        outputFile,
        status: "running",
        exitCode: null,
        startedAt,
        endedAt: undefined,
        droppedBytes: 0,
      },
      send: spec.send,
      abort,
      quiet: false,
      done: spec
        .run({ timeoutMs: spec.timeoutMs, signal: abort.signal, onOutput: write })
        .catch(
          (error: unknown): BackgroundRunEnd => ({
            exitCode: null,
            signal: null,
            timedOut: false,
            aborted: false,
            error: (error as Error).message,
          }),
        )
        .then((end) => {
          const status: Exclude<BackgroundShellStatus, "running"> = end.aborted
            ? "stopped"
            : end.exitCode === 0 && end.error === undefined
              ? "completed"
              : "failed";
          const trailer = [
            ...(end.notes ?? []),
            dropped > 0
              ? `[${dropped} bytes of output not kept: the file keeps the first ${this.#maxOutputBytes}]`
              : "",
            endLine(kind, end, spec.timeoutMs),
          ].filter((line) => line.length > 0);
          // The trailer is written past the cap: the model must always learn how the run ended.
          writeSync(fd, `\n${trailer.join("\n")}\n`);
          closeSync(fd);
          entry.info = {
            ...entry.info,
            status,
            exitCode: end.exitCode,
            endedAt: Date.now(),
            droppedBytes: dropped,
          };
          const summary = noticeSummary(kind, entry.info.description, status, end, spec.timeoutMs);
          if (!entry.quiet) {
            this.#notices.push({
              taskId: id,
              toolUseId: spec.toolUseId,
              outputFile,
              status,
              summary,
              ...(end.result === undefined ? {} : { result: end.result }),
            });
          }
          this.#tell({ type: "ended", task: entry.info, summary, notified: !entry.quiet });
          this.#forgetOldest();
          for (const listener of this.#listeners) listener();
        }),
    };
    this.#entries.set(id, entry);
    this.#tell({ type: "started", task: entry.info });
    return entry.info;
  }

  /**
   * Called as each task starts (before the call that started it is answered) and as it ends
   * (before the agent's notice is handed on). Returns the unsubscribe function.
   */
  onTask(listener: (event: BackgroundTaskEvent) => void): () => void {
    this.#taskListeners.add(listener);
    return () => this.#taskListeners.delete(listener);
  }

  #tell(event: BackgroundTaskEvent): void {
    for (const listener of this.#taskListeners) listener(event);
  }

  /**
   * Stops a running shell and resolves once its whole process tree is gone; no notice follows.
   * undefined: no shell has that id.
   */
  async stop(id: string): Promise<BackgroundShellInfo | undefined> {
    const entry = this.#entries.get(id);
    if (entry === undefined) return undefined;
    if (entry.info.status === "running") {
      entry.quiet = true;
      entry.abort.abort();
    }
    await entry.done;
    return entry.info;
  }

  /**
   * Stops every running shell (the owner ended) and removes the output files; later starts are
   * refused. Resolves once every process tree is gone. Returns what was still running.
   */
  async close(): Promise<BackgroundShellInfo[]> {
    this.#closed = true;
    this.#resumable.clear();
    const running = [...this.#entries.values()].filter((entry) => entry.info.status === "running");
    for (const entry of running) {
      entry.quiet = true;
      entry.abort.abort();
    }
    await Promise.all([...this.#entries.values()].map((entry) => entry.done));
    if (this.#dir !== undefined) rmSync(this.#dir, { recursive: true, force: true });
    return running.map((entry) => entry.info);
  }

  /**
   * R-T5: delivers `message` to task `id` (SendMessage): a running sub-agent reads it before its
   * next request; a finished one registered with `resumable` is started again with it ("resumed").
   * A string is why it cannot be delivered — no such agent, it has ended and cannot be resumed
   * (its report is in its output file), or it is a shell.
   */
  send(id: string, message: string): { readonly resumed: boolean } | string {
    const entry = this.#entries.get(id);
    const resume = this.#resumable.get(id);
    if (entry?.info.status === "running") {
      if (entry.send === undefined)
        return `Task ${id} is a background command, not an agent; it takes no messages`;
      // Being stopped (TaskStop, stopTask()): a steered message would reach a run that takes no
      // more steps. A resumable one is started again with it once that run has ended.
      if (entry.abort.signal.aborted) {
        if (resume === undefined)
          return `Agent ${id} is being stopped, and your message was not delivered; it cannot be resumed`;
        void entry.done.then(() => {
          if (!this.#closed) resume(message);
        });
        return { resumed: true };
      }
      entry.send(message);
      return { resumed: false };
    }
    if (resume !== undefined) {
      const started = resume(message);
      return typeof started === "string"
        ? `Agent ${id} was not resumed, and your message was not delivered: ${started}`
        : { resumed: true };
    }
    if (entry === undefined) {
      const agents = this.list().filter((task) => task.kind === "local_agent" && task.status === "running");
      const known =
        agents.length === 0 ? "none is running" : `running: ${agents.map((task) => task.id).join(", ")}`;
      return `No background agent with ID: ${id} (${known})`;
    }
    if (entry.send === undefined)
      return `Task ${id} is a background command, not an agent; it takes no messages`;
    return `Agent ${id} has ended (${entry.info.status}); its report is in ${entry.info.outputFile}`;
  }

  /**
   * R-T5: sub-agent `id`, once it is not running, can be resumed by a message: `resume` starts
   * its task again (here, under the same id) with the message, or says why it cannot.
   */
  resumable(id: string, resume: (message: string) => BackgroundShellInfo | string): void {
    this.#resumable.set(id, resume);
  }

  /**
   * R-T5: a foreground call (`toolUseId`) that `move` can turn into a background task — it starts
   * one here and answers its call at once, true when it did. The returned function unregisters it
   * (the call ended on its own).
   */
  movable(toolUseId: string, move: () => boolean): () => void {
    this.#movable.set(toolUseId, move);
    return () => {
      if (this.#movable.get(toolUseId) === move) this.#movable.delete(toolUseId);
    };
  }

  /**
   * R-T5: moves the foreground call `toolUseId` (every one, without it) to the background, as the
   * Agent SDK's backgroundTasks() and Claude Code's Ctrl+B do; true when one moved.
   */
  moveToBackground(toolUseId?: string): boolean {
    const targets = toolUseId === undefined ? [...this.#movable.keys()] : [toolUseId];
    let moved = false;
    for (const id of targets) {
      const move = this.#movable.get(id);
      if (move === undefined) continue;
      this.#movable.delete(id);
      moved = move() || moved;
    }
    return moved;
  }

  /** True while one of the shells runs. */
  hasRunning(): boolean {
    return [...this.#entries.values()].some((entry) => entry.info.status === "running");
  }

  list(): BackgroundShellInfo[] {
    return [...this.#entries.values()].map((entry) => entry.info);
  }

  get(id: string): BackgroundShellInfo | undefined {
    return this.#entries.get(id)?.info;
  }

  /** The shell whose output file this real path is, if any (Read may read it, R-T4). */
  byOutputFile(realPath: string): BackgroundShellInfo | undefined {
    if (this.#dir === undefined) return undefined;
    return this.list().find((shell) => shell.outputFile === realPath);
  }

  /** The notices not yet handed to the agent, removed from the queue. */
  takeNotices(): BackgroundTaskNotice[] {
    return this.#notices.splice(0);
  }

  /** Called after each shell ends (a notice may be waiting). Returns the unsubscribe function. */
  onEnded(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Resolves when a notice is waiting or nothing runs any more (at once if either holds now). */
  async nextEvent(signal?: AbortSignal): Promise<void> {
    const ready = () => this.#notices.length > 0 || !this.list().some((shell) => shell.status === "running");
    if (ready() || signal?.aborted === true) return;
    await new Promise<void>((resolvePromise) => {
      const done = () => {
        off();
        signal?.removeEventListener("abort", done);
        resolvePromise();
      };
      const off = this.onEnded(() => {
        if (ready()) done();
      });
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  #directory(): string {
    if (this.#dir === undefined) {
      // mkdtemp makes the directory 0700; its real path is what Read compares.
      this.#dir = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-tasks-")));
    }
    return this.#dir;
  }

  #forgetOldest(): void {
    const ended = [...this.#entries.values()].filter((entry) => entry.info.status !== "running");
    for (const entry of ended.slice(0, Math.max(0, ended.length - ENDED_SHELLS_KEPT))) {
      this.#entries.delete(entry.info.id);
      rmSync(entry.info.outputFile, { force: true });
    }
  }
}

function endLine(kind: BackgroundTaskKind, end: BackgroundRunEnd, timeoutMs: number): string {
  if (kind === "local_agent") {
    if (end.aborted) return "[stopped: the sub-agent was cancelled]";
    return end.error === undefined
      ? "[the sub-agent completed]"
      : `[the sub-agent did not complete: ${end.error}]`;
  }
  if (end.error !== undefined) return `[could not run: ${end.error}]`;
  if (end.aborted) return "[stopped: its whole process tree was killed]";
  if (end.timedOut) return `[timed out after ${timeoutMs} ms: its whole process tree was killed]`;
  if (end.exitCode === null) return `[killed by signal ${end.signal ?? "unknown"}]`;
  return `[exited with code ${end.exitCode}]`;
}

function noticeSummary(
  kind: BackgroundTaskKind,
  description: string,
  status: BackgroundShellStatus,
  end: BackgroundRunEnd,
  timeoutMs: number,
): string {
  if (kind === "local_agent") {
    const agent = `Agent "${description}"`;
    if (status === "completed") return `${agent} completed`;
    if (status === "stopped") return `${agent} was stopped`;
    return `${agent} failed: ${end.error ?? "it did not complete"}`;
  }
  const name = `Background command "${description}"`;
  if (status === "completed") return `${name} completed (exit code 0)`;
  // Claude Code's summary of a stopped command is its description alone (only its task says so:
  // a stop is never told to the model).
  if (status === "stopped") return description;
  if (end.error !== undefined) return `${name} could not run: ${end.error}`;
  if (end.timedOut) return `${name} timed out after ${timeoutMs} ms and was stopped`;
  if (end.exitCode === null) return `${name} was killed by signal ${end.signal ?? "unknown"}`;
  return `${name} failed with exit code ${end.exitCode}`;
}

const registries = new WeakMap<AgentState, BackgroundShells>();

/** The agent's background shells, made on first use (per agent: a sub-agent's are its own). */
export function backgroundShellsFor(state: AgentState): BackgroundShells {
  let shells = registries.get(state);
  if (shells === undefined) {
    shells = new BackgroundShells();
    registries.set(state, shells);
  }
  return shells;
}

/** The agent's background shells if it ever started one. */
export function existingBackgroundShells(state: AgentState): BackgroundShells | undefined {
  return registries.get(state);
}

/** Hook inputs' `background_tasks` (Stop, SubagentStop): the agent's shells still running, as Claude Code lists them. */
export function runningBackgroundTasks(
  state: AgentState,
): { id: string; type: "shell"; status: string; description: string; command: string }[] {
  return (existingBackgroundShells(state)?.list() ?? [])
    .filter((shell) => shell.status === "running")
    .map((shell) => ({
      id: shell.id,
      type: "shell" as const,
      status: shell.status,
      description: shell.description,
      command: shell.command,
    }));
}

/** Claude Code's task notification, as the user-turn text the agent gets when a shell ends. */
export function taskNotificationText(notice: BackgroundTaskNotice): string {
  return [
    "[SYSTEM NOTIFICATION - NOT USER INPUT]",
    "This is an automated background-task event, NOT a message from the user.",
    "Do NOT interpret this as user acknowledgement, confirmation, or response to any pending question.",
    "",
    "<task-notification>",
    `<task-id>${escapeXml(notice.taskId)}</task-id>`,
    `<tool-use-id>${escapeXml(notice.toolUseId)}</tool-use-id>`,
    `<output-file>${escapeXml(notice.outputFile)}</output-file>`,
    `<status>${notice.status}</status>`,
    `<summary>${escapeXml(notice.summary)}</summary>`,
    ...(notice.result === undefined ? [] : [`<result>${escapeXml(cappedResult(notice))}</result>`]),
    "</task-notification>",
  ].join("\n");
}

/**
 * What still runs, for the summary compaction leaves (R-T4): the model keeps knowing its shells'
 * ids and files after the turns that started them are summarised away. Empty when nothing runs.
 */
export function runningShellsNote(shells: BackgroundShells | undefined): string {
  const running = shells?.list().filter((shell) => shell.status === "running") ?? [];
  if (running.length === 0) return "";
  return [
    "Background tasks still running (started before this summary; Read the output file, stop with TaskStop):",
    ...running.map((shell) =>
      shell.kind === "local_agent"
        ? `- ${shell.id}: sub-agent "${shell.description}" → ${shell.outputFile}`
        : `- ${shell.id}: ${shell.description} — \`${shell.command}\` → ${shell.outputFile}`,
    ),
  ].join("\n");
}

/** A long report is cut in the notice; the output file keeps it whole. */
function cappedResult(notice: BackgroundTaskNotice): string {
  const result = notice.result ?? "";
  if (result.length <= NOTICE_RESULT_MAX_CHARS) return result;
  return `${result.slice(0, NOTICE_RESULT_MAX_CHARS)}\n[report cut at ${NOTICE_RESULT_MAX_CHARS} characters: Read ${notice.outputFile} for the rest]`;
}

/** The model's command and description reach the notification: `<` cannot open a tag there. */
function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * Hands each ended shell's notice to `queue` as it ends (R-T4): a loop drains the queue between
 * tool turns (R-L2), so the agent hears of it while it still works. Returns the unsubscribe
 * function; notices that ended before the call are handed over at once.
 */
export function forwardTaskNotices(
  shells: BackgroundShells,
  queue: QueuedCommand[],
  uuid: () => string = randomUUID,
): () => void {
  const forward = () => {
    for (const notice of shells.takeNotices()) {
      queue.push({ uuid: uuid(), content: taskNotificationText(notice), kind: "task_notification" });
    }
  };
  forward();
  return shells.onEnded(forward);
}
