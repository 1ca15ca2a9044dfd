import { existsSync } from "node:fs";
import { join } from "node:path";
import { type PermissionMode, query } from "@forkloop/sdk";
import { type BrainReply, type BrainRequest, startSimulator } from "@forkloop/sim";
import type { CaseGroup, CorpusCase, Through } from "./corpus.js";
import { CREDENTIAL_ENV, freshDir, initRepo } from "./places.js";

/**
 * R-S14, R-T5: a background sub-agent finishes; then `query().setPermissionMode()` changes the
 * mode; then the main agent resumes the sub-agent with SendMessage, and the resumed run asks for
 * a call. That call must be judged in the new mode, not the one the sub-agent first ran in (a
 * resume that copied its fork-time profile back would run it in the old mode). The mode is
 * changed from inside the main agent's request that follows the sub-agent's notification, so the
 * order is fixed without timing. The control runs the same queries without the change.
 */

interface ResumeCase extends CorpusCase {
  readonly from: PermissionMode;
  readonly to: PermissionMode;
  readonly call: (marker: string) => { name: string; input: Record<string, unknown> };
}

const write = (marker: string) => ({ name: "Write", input: { file_path: marker, content: "x" } });
/** A program's write, not `touch` (which acceptEdits approves as an edit). */
const bash = (marker: string) => ({
  name: "Bash",
  input: { command: `${process.execPath} -e "require('fs').writeFileSync('${marker}','')"` },
});

const resumeCase = (from: PermissionMode, to: PermissionMode, call: ResumeCase["call"]): ResumeCase => {
  const kind = call === write ? "write" : "bash";
  const dashed = (mode: string) => mode.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  return {
    id: `mode-resumed-${kind}-${dashed(from)}-to-${dashed(to)}`,
    area: "trust-patterns",
    what: `a background sub-agent finished in ${from}; mode set to ${to}; resumed by SendMessage, it asks for a ${kind}`,
    from,
    to,
    call,
  };
};

const CASES: readonly ResumeCase[] = [
  resumeCase("acceptEdits", "plan", write),
  resumeCase("acceptEdits", "default", write),
  resumeCase("acceptEdits", "dontAsk", write),
  resumeCase("bypassPermissions", "plan", bash),
  resumeCase("bypassPermissions", "default", bash),
  resumeCase("bypassPermissions", "dontAsk", bash),
];

const text = (value: string): BrainReply => ({ content: [{ type: "text", text: value }] });
const use = (name: string, input: Record<string, unknown>): BrainReply => ({
  content: [{ type: "tool_use", name, input }],
});

/** One query for one case; `change` false is the control. */
async function runCase(entry: ResumeCase, dir: string, change: boolean): Promise<Through[]> {
  const root = initRepo(join(freshDir(dir), "project"));
  const home = freshDir(dir, "home");
  const marker = join(root, `${entry.id}.marker`);
  const counts = new Map<string, number>();
  let changeMode: () => Promise<void> = async () => {};
  let agentId = "";
  let resumed = false;
  const brain = async (request: BrainRequest): Promise<BrainReply> => {
    const source = request.querySource ?? "";
    const count = (counts.get(source) ?? 0) + 1;
    counts.set(source, count);
    const said = `${request.lastUserText ?? ""}\n${request.lastToolResults.map((result) => result.content).join("\n")}`;
    agentId =
      /agentId: (agent-\w+)/.exec(said)?.[1] ?? /<task-id>(agent-\w+)<\/task-id>/.exec(said)?.[1] ?? agentId;
    if (source === "agent:actor") {
      if (count === 1) return text("report one: nothing to do yet");
      if (count === 2) return use(entry.call(marker).name, entry.call(marker).input);
      return text("report two (scripted)");
    }
    if (source !== "sdk") return text("done (scripted)");
    if (count === 1)
      return use("Agent", {
        description: "act later",
        prompt: "Wait for my message.",
        subagent_type: "actor",
        run_in_background: true,
      });
    // The sub-agent's first run has ended: change the mode, then resume it.
    if (said.includes("<task-notification>") && said.includes("report one") && !resumed) {
      resumed = true;
      if (change) await changeMode();
      return use("SendMessage", { to: agentId, message: "Now do it.", summary: "do it" });
    }
    return text("done (scripted)");
  };
  const sim = await startSimulator({ brain });
  try {
    const run = query({
      prompt: "Start.",
      options: {
        cwd: root,
        env: { ...CREDENTIAL_ENV, ANTHROPIC_BASE_URL: sim.url, HOME: home, PATH: process.env.PATH ?? "" },
        permissionMode: entry.from,
        allowDangerouslySkipPermissions: true,
        maxTurns: 8,
        agents: { actor: { description: "acts", prompt: "You act." } },
        stderr: () => {},
      },
    });
    changeMode = async () => {
      await run.setPermissionMode(entry.to);
    };
    for await (const _message of run) {
      // Drained to the end: the resumed run and its notification come in the same query.
    }
    const through: Through[] = [];
    if (!resumed) through.push({ id: "harness", effect: `${entry.id}: the sub-agent was never resumed` });
    if (existsSync(marker))
      through.push({
        id: entry.id,
        effect: `the resumed sub-agent's ${entry.call(marker).name} ran in ${entry.from}, not ${entry.to}`,
      });
    return through;
  } finally {
    await sim.close();
  }
}

function everyCase(change: boolean) {
  return async (dir: string) =>
    (await Promise.all(CASES.map((entry, index) => runCase(entry, join(dir, `${index}`), change)))).flat();
}

export const groups: readonly CaseGroup[] = [
  {
    title: "R-S14: a sub-agent resumed by SendMessage after setPermissionMode() runs in the new mode",
    cases: CASES,
    surfaces: [
      {
        label: "query() from @forkloop/sdk: background sub-agent, setPermissionMode(), SendMessage",
        run: everyCase(true),
      },
    ],
    control: {
      label: "the same queries without the change: the resumed call runs in the starting mode",
      expect: CASES.map((entry) => entry.id),
      run: everyCase(false),
    },
  },
];
