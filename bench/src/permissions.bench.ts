/**
 * The permission bench (R-S1, R-S2): the checker's decision time per Bash command (parse with unbash,
 * walk, rules, read-only table, path checks on a real temp workspace), p50/p99 for commands of
 * about 20, 200 and 2,000 characters; and a Bash call's latency in bubblewrap against the same
 * call without it (when bwrap works here). `npm run bench -- permissions`.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createBashTool,
  createBuiltinTools,
  createPermissionChecker,
  probeBubblewrap,
} from "@forkloop/tools";
import { callTool, createToolTestContext } from "@forkloop/tools/testing";
import { type BenchResult, compare, percentile, timeRuns } from "./harness.js";

/**
 * Commands of the three sizes, mixing what models send: lists, pipes, substitutions, redirects.
 * `distinct`: every part names other paths, so no simple command repeats (each part is judged
 * once per decision, so a repeated part costs nothing the second time).
 */
function commandOf(length: number, distinct = false): string {
  const parts = [
    "git status --short",
    "ls -la src",
    "cat README.md | head -20",
    "grep -rn 'TODO' src",
    "npm test -- --watch=false",
    "echo $(date +%s) > /dev/null",
    "find . -name '*.ts' -type f",
    "git log --oneline -5",
  ];
  let command = "";
  for (let index = 0; command.length < length; index++) {
    const part = parts[index % parts.length] as string;
    const varied = distinct
      ? part.replace(/src|README\.md|TODO|\*\.ts|-5/, (word) => `${word}${index}`)
      : part;
    command += `${command === "" ? "" : " && "}${varied}`;
  }
  return command;
}

export async function run(): Promise<BenchResult[]> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-bench-permissions-")));
  try {
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "README.md"), "# bench\n");
    writeFileSync(join(root, ".env"), "KEY=x\n");
    const checker = createPermissionChecker({
      mode: "default",
      rules: { allow: ["Bash(npm test:*)"], ask: [], deny: ["Bash(rm:*)", "Read(./.env)"] },
      tools: createBuiltinTools(),
      cwd: root,
    });
    const options = { signal: new AbortController().signal, toolUseId: "t", agentId: "main" };
    const results: BenchResult[] = [];
    for (const [length, distinct] of [
      [20, false],
      [200, false],
      [2_000, false],
      [2_000, true],
    ] as const) {
      const command = commandOf(length, distinct);
      const shape = distinct ? ", no part repeated" : "";
      const samples = await timeRuns(
        () => checker("Bash", { command }, options),
        length >= 2_000 ? 200 : 1_000,
        20,
      );
      const p50 = percentile(samples, 50);
      const p99 = percentile(samples, 99);
      results.push(
        {
          name: `permissions: Bash decision, ${command.length}-char command${shape}`,
          metric: "p50",
          value: p50 * 1000,
          unit: "µs",
          notes: `p99 ${(p99 * 1000).toFixed(0)} µs; ${samples.length} decisions`,
        },
        {
          name: `permissions: Bash decision, ${command.length}-char command${shape}`,
          metric: "p99",
          value: p99 * 1000,
          unit: "µs",
        },
      );
    }
    const probe = probeBubblewrap();
    if (probe.ok) {
      const context = createToolTestContext({ cwd: root });
      const plain = createBashTool();
      const sandboxed = createBashTool({ sandbox: { enabled: true, bwrap: probe.bwrap } });
      const command = { command: "echo hi > out.txt && cat out.txt" };
      const direct = await timeRuns(() => callTool(plain, command, context), 30, 3);
      const boxed = await timeRuns(() => callTool(sandboxed, command, context), 30, 3);
      results.push(
        compare(
          "permissions: Bash call latency, sandboxed / not (lower is better)",
          "median",
          "ms",
          { label: "bash -c", value: percentile(direct, 50) },
          { label: "bwrap … bash -c", value: percentile(boxed, 50) },
        ),
      );
    } else {
      results.push({
        name: "permissions: Bash call in bubblewrap",
        metric: "skipped",
        value: 0,
        unit: "",
        notes: probe.reason,
      });
    }
    return results;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
