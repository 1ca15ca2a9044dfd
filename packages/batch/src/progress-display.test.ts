import { terminalStream } from "@forkloop/tools";
import { describe, expect, it } from "vitest";
import {
  cacheReadShare,
  etaMs,
  formatProgressLine,
  ProgressDisplay,
  type ProgressSnapshot,
} from "./progress-display.js";

const snapshot: ProgressSnapshot = {
  total: 100,
  skipped: 10,
  succeeded: 30,
  failed: 2,
  running: 8,
  inputTokens: 1_000,
  outputTokens: 2_500,
  cacheCreationInputTokens: 1_000,
  cacheReadInputTokens: 8_000,
  costUsd: 0.0123,
  elapsedMs: 32_000,
};

describe("progress display", () => {
  it("one line with done / running / failed, ETA, tokens, cost and cache-read %", () => {
    expect(formatProgressLine(snapshot)).toBe(
      "42/100 done · 8 running · 2 failed · ETA 58s · 10.0k in / 2.5k out tok · $0.0123 · cache-read 80%",
    );
  });

  it("ETA comes from this run's own rate (skipped items are not counted as speed)", () => {
    expect(etaMs(snapshot)).toBe((58 * 32_000) / 32);
    expect(etaMs({ ...snapshot, succeeded: 0, failed: 0 })).toBe(Number.POSITIVE_INFINITY);
    expect(cacheReadShare({ inputTokens: 0, cacheCreationInputTokens: 0, cacheReadInputTokens: 0 })).toBe(0);
  });

  it("shows a rate-limit pause", () => {
    expect(formatProgressLine({ ...snapshot, pausedForMs: 3_000 })).toContain("paused 3s (rate limited)");
  });

  it("TTY: redraws one line in place; non-TTY: plain lines only", () => {
    const tty: string[] = [];
    const onTty = new ProgressDisplay(
      { write: (text: string) => tty.push(text), isTTY: true, columns: 200 },
      { minRedrawMs: 0 },
    );
    onTty.update(snapshot);
    onTty.log("ok a.ts", snapshot);
    onTty.finish(snapshot);
    expect(tty[0]?.startsWith("\r\x1b[2K42/100 done")).toBe(true);
    expect(tty.join("")).toContain("\r\x1b[2Kok a.ts\n");

    const plain: string[] = [];
    const onPipe = new ProgressDisplay({ write: (text: string) => plain.push(text) });
    onPipe.update(snapshot);
    onPipe.log("ok a.ts");
    onPipe.finish(snapshot);
    expect(plain.join("")).not.toContain("\x1b");
    expect(plain).toEqual(["ok a.ts\n", `${formatProgressLine(snapshot)}\n`]);
  });

  it("R-S14: on a terminal stream, a logged line (an item label from a file name) is escaped and only the redraw is raw", () => {
    const label = "ok \x1b]52;c;ZXZpbA==\x07\u009b2J\u202egnp.ts";
    const tty: string[] = [];
    const sink = { write: (text: string) => tty.push(text), isTTY: true, columns: 200 };
    const display = new ProgressDisplay(terminalStream(sink), { minRedrawMs: 0 });
    display.log(label, snapshot);
    expect(tty.join("")).toContain("\r\x1b[2Kok \\u001b]52;c;ZXZpbA==\\u0007\\u009b2J\\u202egnp.ts\n");
    expect(tty.join("")).toContain("\r\x1b[2K42/100 done");
    // Control: given the stream itself, as before, the label's bytes reach the terminal.
    const before: string[] = [];
    new ProgressDisplay({ ...sink, write: (text: string) => before.push(text) }).log(label);
    expect(before.join("")).toContain(label);
  });
});
