import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BenchResult, compare } from "../harness.js";

const CHILD = fileURLToPath(new URL("./transcript-growth-child.js", import.meta.url));

function child(args: readonly string[]): { maxRssBytes: number; conversationBytes: number } {
  const out = execFileSync(process.execPath, [CHILD, ...args], { encoding: "utf8", maxBuffer: 1 << 20 });
  return JSON.parse(out.trim().split("\n").at(-1) ?? "{}");
}

/**
 * R-R12: a 300-turn session's transcript size against its final conversation
 * (goal ≤ 3×), and `--resume`'s peak memory against the run's (goal ≤ 1.2×), each process on its
 * own (maxRSS), format 2 (the prefix once per change, resume streamed) beside format 1 (the whole
 * CacheSafeParams every turn, resume loading every record). The transcript layer is forkloop's
 * own (TranscriptWriter.appendCacheSafeParams, readTranscript), fed a synthetic conversation:
 * a 30 kB system prompt, 24 tool definitions, a Read and its 3 kB result per turn.
 */
export async function transcriptGrowth(dir: string): Promise<BenchResult[]> {
  const newPath = join(dir, "growth-v2.fltr");
  const oldPath = join(dir, "growth-v1.fltr");
  const run = child(["run", newPath, "2"]);
  const oldRun = child(["run", oldPath, "1"]);
  const resume = child(["resume", newPath]);
  const oldResume = child(["resume-whole", oldPath]);
  const conversation = run.conversationBytes;
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  const notes = `conversation ${mib(conversation)}; transcript format 2 ${mib(statSync(newPath).size)}, format 1 ${mib(statSync(oldPath).size)}; peak RSS run ${mib(run.maxRssBytes)} / resume ${mib(resume.maxRssBytes)} (format 2), run ${mib(oldRun.maxRssBytes)} / resume ${mib(oldResume.maxRssBytes)} (format 1)`;
  return [
    compare(
      "300-turn transcript size / final conversation size (lower is better; goal ≤ 3)",
      "size ratio",
      "×",
      { label: "format 1: CacheSafeParams every turn", value: statSync(oldPath).size / conversation },
      { label: "format 2: prefix once per change", value: statSync(newPath).size / conversation },
      notes,
    ),
    compare(
      "resume peak memory / the run's (lower is better; goal ≤ 1.2)",
      "maxRSS ratio",
      "×",
      { label: "format 1, whole-file load", value: oldResume.maxRssBytes / oldRun.maxRssBytes },
      { label: "format 2, streamed", value: resume.maxRssBytes / run.maxRssBytes },
      notes,
    ),
  ];
}
