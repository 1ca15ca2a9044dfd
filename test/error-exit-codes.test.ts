/**
 * R-A7: one error family, one table from an error's code to the process's exit code, and one
 * describeError that gives the CLI and a program the same problem and fix. Every failure the
 * user fixes is exit 2 naming it; only a bug is exit 1 with its stack.
 */
import {
  BATCH_ERROR_CODES,
  BatchError,
  BatchRefusedError,
  LogWriteError,
  QueueUnreachableError,
  QueueUnsafeError,
} from "@forkloop/batch";
import { ForkloopError } from "@forkloop/loop-core/errors";
import { OrchestratorError } from "@forkloop/orchestrator";
import { TelemetryConfigError } from "@forkloop/orchestrator/telemetry";
import { NotATranscriptError } from "@forkloop/report";
import { AbortError, describeError, ErrorResultError } from "@forkloop/sdk";
import { OptionsError } from "@forkloop/sdk/errors";
import { LockHeldError } from "@forkloop/sdk/owner-lock";
import { FaultSpecError, NoMatchingRuleError, ScenarioError } from "@forkloop/sim";
import { describe, expect, it } from "vitest";
import { CliError } from "../apps/cli/src/cli-error.js";
import { EXIT, EXIT_FOR_ERROR_CODE, exitCodeForError } from "../apps/cli/src/exit-codes.js";
import { BatchScriptError } from "../packages/sim/src/batch-script.js";

const damage = { path: "/s/abc.fltr", offset: 10, intactRecords: 2, laterRecords: 1, fileBytes: 40 };
const enospc = Object.assign(new Error("ENOSPC: no space left on device, write"), {
  code: "ENOSPC",
  syscall: "write",
  path: "/state/x",
});

/** Each error class a command can end with, and the exit code it must end the process with. */
const CASES: readonly (readonly [string, number, unknown])[] = [
  ["CliError (a bad flag)", 2, new CliError("unknown flag --x. Did you mean --y?")],
  ["OptionsError (a bad settings file)", 2, new OptionsError("bad settings: fix it")],
  [
    "LockHeldError",
    2,
    new LockHeldError("held by 1", "/lock", { pid: 1, host: "h", startedAt: "t" } as never),
  ],
  ...BATCH_ERROR_CODES.map(
    (code) => [`BatchError ${code}`, 2, new BatchError(code, `${code}: fix it`)] as const,
  ),
  ["QueueUnreachableError", 2, new QueueUnreachableError("cannot reach Redis: start it")],
  ["QueueUnsafeError", 2, new QueueUnsafeError("Redis evicts keys: set noeviction")],
  ["a damaged transcript", 2, new OrchestratorError("transcript_corrupt", "damaged", { ...damage })],
  [
    "a transcript write that failed",
    2,
    new OrchestratorError("transcript_write_failed", "x", { path: "/s/abc.fltr", errno: "EROFS" }),
  ],
  ["LogWriteError (a full disk under the journal)", 2, new LogWriteError("/b/journal.log", "ENOSPC", enospc)],
  ["a file-system errno", 2, enospc],
  ["NotATranscriptError", 2, new NotATranscriptError("/tmp/notes.txt")],
  [
    "TelemetryConfigError (an OTEL_* variable forkloop cannot follow)",
    2,
    new TelemetryConfigError("bad OTEL"),
  ],
  ["FaultSpecError (a bad --faults)", 2, new FaultSpecError('fault "9@1": status must be 400-599')],
  [
    "BatchScriptError (a bad --batch-script)",
    2,
    new BatchScriptError("expire@0: batches and entries count from 1"),
  ],
  ["ScenarioError (a bad scenario file)", 2, new ScenarioError("/s.json: rules.0: invalid")],
  [
    "NoMatchingRuleError (a scenario with no rule for a request)",
    2,
    new NoMatchingRuleError("no rule matched"),
  ],
  ["AbortError (a query aborted)", 130, new AbortError("Claude Code process aborted by user")],
  [
    "ErrorResultError (a query that ended with an error result, exit 1 as the Agent SDK's script)",
    1,
    new ErrorResultError("Reached maximum number of turns (1)", {
      type: "result",
      subtype: "error_max_turns",
    } as never),
  ],
  ["a worker that crashed (a bug or a fault)", 1, new OrchestratorError("worker_crashed", "worker exited")],
  ["BatchRefusedError escaping its worker", 1, new BatchRefusedError("mcp_server_unavailable", "x")],
  ["a plain Error (a bug)", 1, new Error("boom")],
  ["a thrown string", 1, "boom"],
];

describe("R-A7: the exit code of every error comes from one table", () => {
  it.each(CASES)("%s → exit %d", (_name, code, error) => {
    expect(exitCodeForError(describeError(error).code)).toBe(code);
  });

  it("every batch error code is in the table as bad input (a new code without an entry fails here)", () => {
    for (const code of BATCH_ERROR_CODES)
      expect([code, EXIT_FOR_ERROR_CODE[code]]).toEqual([code, EXIT.usage]);
  });

  it("a code the table does not list is a bug (exit 1), whatever the class", () => {
    expect(exitCodeForError("no_such_code")).toBe(EXIT.internal);
    expect(exitCodeForError("toString")).toBe(EXIT.internal);
    expect(new CliError("x").exitCode).toBe(EXIT.usage);
  });

  it("batch and report errors are ForkloopErrors with a stable code", () => {
    const errors = [
      new BatchError("dirty_worktree", "x"),
      new QueueUnreachableError("x"),
      new QueueUnsafeError("x"),
      new BatchRefusedError("mcp_server_unavailable", "x"),
      new LogWriteError("/j", "EIO", new Error("io")),
      new NotATranscriptError("/f"),
    ];
    expect(errors.map((error) => [error instanceof ForkloopError, error.name, error.code])).toEqual([
      [true, "BatchError", "dirty_worktree"],
      [true, "QueueUnreachableError", "queue_unreachable"],
      [true, "QueueUnsafeError", "queue_unsafe"],
      [true, "BatchRefusedError", "mcp_server_unavailable"],
      [true, "LogWriteError", "EIO"],
      [true, "NotATranscriptError", "not_a_transcript"],
    ]);
  });
});

describe("R-A7: describeError gives the problem and the fix, and a stack only for a bug", () => {
  it("a user's error is its own message; a damaged transcript names the repair; a full disk names the fix", () => {
    expect(describeError(new BatchError("invalid_batch", "give one of --isolate and --no-isolate"))).toEqual({
      code: "invalid_batch",
      message: "give one of --isolate and --no-isolate",
    });
    expect(describeError(new OrchestratorError("transcript_corrupt", "x", { ...damage })).message).toBe(
      '/s/abc.fltr is damaged at byte 10 of 40: the 2 records before it are intact (1 readable records follow it); the file was not changed. Continue from the intact part with `forkloop run --resume abc --repair "…"` (the damaged file is kept beside it as abc.fltr.damaged-<time>).',
    );
    expect(describeError(new TelemetryConfigError("OTEL_TRACES_EXPORTER=zipkin: use otlp"))).toEqual({
      code: "invalid_telemetry_config",
      message: "OTEL_TRACES_EXPORTER=zipkin: use otlp",
    });
    expect(describeError(enospc)).toEqual({
      code: "file_system",
      message:
        "cannot write /state/x: no space left on the device (ENOSPC). Free some space, then run the command again.",
    });
  });

  it("the simulator's errors, an abort and an error result are their own message, never an unexpected error with a stack", () => {
    expect(describeError(new ScenarioError("/s.json: rules.0.reply: Required"))).toEqual({
      code: "invalid_scenario",
      message: "/s.json: rules.0.reply: Required",
    });
    expect(describeError(new FaultSpecError("random faults: p429 must be within 0..1"))).toEqual({
      code: "invalid_fault_spec",
      message: "random faults: p429 must be within 0..1",
    });
    expect(describeError(new AbortError("Claude Code process aborted by user"))).toEqual({
      code: "aborted",
      message: "interrupted: Claude Code process aborted by user",
    });
    const ended = new ErrorResultError("Reached maximum number of turns (1)", {
      type: "result",
      subtype: "error_max_turns",
    } as never);
    expect(describeError(ended)).toEqual({
      code: "error_result",
      message: "Claude Code returned an error result: Reached maximum number of turns (1)",
    });
  });

  it("a bug says it is unexpected and keeps its stack", () => {
    const bug = new TypeError("x is undefined");
    const described = describeError(bug);
    expect(described.code).toBe("internal");
    expect(described.message).toBe(`unexpected error: ${bug.stack}`);
  });
});
