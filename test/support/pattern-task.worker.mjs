// Runs the pattern tasks of test/pattern-bounds.test.ts in a worker thread, against the BUILT
// packages (the worker has no "source" condition), posting each start and result. The test kills
// the thread when a task does not answer in time: that is the "hang" it asserts on (R-S12).
import { parentPort, workerData } from "node:worker_threads";
import { globFiles } from "@forkloop/batch";
import {
  createBuiltinTools,
  createGrepTool,
  createJsGrepBackend,
  createPermissionChecker,
  globTool,
  lsTool,
  withToolMatcher,
} from "@forkloop/tools";
import { backtrackingRegexEngine, callTool, createToolTestContext } from "@forkloop/tools/testing";
import ignore from "ignore";
import picomatch from "picomatch";

async function run(task) {
  switch (task.kind) {
    case "tool": {
      const tools = {
        Grep: createGrepTool({
          backend: createJsGrepBackend(
            task.engine === "backtracking" ? { engine: backtrackingRegexEngine } : {},
          ),
        }),
        Glob: globTool,
        LS: lsTool,
      };
      const tool = tools[task.tool];
      const result = await callTool(tool, task.input, createToolTestContext({ cwd: task.cwd ?? task.root }));
      return { isError: result.isError === true, text: String(result.content) };
    }
    case "bash-permission":
    case "read-permission": {
      const check = createPermissionChecker({
        mode: "default",
        rules: { allow: [], ask: [], deny: task.deny },
        tools: createBuiltinTools(),
        cwd: task.cwd ?? task.root,
      });
      const decision = await check(
        task.kind === "bash-permission" ? "Bash" : "Read",
        task.kind === "bash-permission" ? { command: task.command } : { file_path: task.file },
        {
          signal: new AbortController().signal,
          toolUseId: "toolu_pattern",
          agentId: "main",
        },
      );
      return {
        isError: decision.behavior === "deny",
        text: `${decision.behavior}: ${decision.message ?? ""}`,
      };
    }
    case "batch-files": {
      const files = await globFiles(task.glob, task.cwd);
      return { isError: false, text: files.join("\n") };
    }
    case "hook-matcher": {
      const outcome = await withToolMatcher(task.matcher, async () => ({ ran: true }))({
        toolName: task.toolName,
      });
      return { isError: false, text: String(outcome.ran === true) };
    }
    case "ignore-package":
      return { isError: false, text: String(ignore().add(task.gitignore).ignores(task.path)) };
    case "picomatch":
      return { isError: false, text: String(picomatch(task.glob, { dot: true })(task.path)) };
    case "regexp":
      return { isError: false, text: String(new RegExp(task.source, task.flags).test(task.text)) };
    default:
      throw new Error(`unknown task ${JSON.stringify(task)}`);
  }
}

parentPort.postMessage("ready");
for (const [index, task] of workerData.entries()) {
  parentPort.postMessage({ start: index });
  parentPort.postMessage({ done: index, result: await run(task) });
}
