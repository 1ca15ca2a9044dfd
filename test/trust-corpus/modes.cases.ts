import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type PermissionMode, query } from "@forkloop/sdk";
import { type BrainReply, type BrainRequest, startSimulator } from "@forkloop/sim";
import type { CaseGroup, CorpusCase, Surface, Through } from "./corpus.js";
import { CREDENTIAL_ENV, freshDir, initRepo } from "./places.js";

/**
 * R-S14: a permission mode changed during a turn with
 * `query().setPermissionMode()` reaches every agent already running — sub-agents (read at call
 * time, not copied at fork time), their own sub-agents, the main agent's next call. One query per
 * change (from → to) runs every case of that change at once: the main agent starts one sub-agent
 * per case (a nested case: a sub-agent that starts another), the simulator holds each one's next
 * reply until the test has changed the mode, and the call it then asks for must be judged in the
 * new mode. The control runs the same queries without the change.
 */

interface ModeCase extends CorpusCase {
  readonly from: PermissionMode;
  readonly to: PermissionMode;
  /** Who asks for the call after the change: a running sub-agent, its own sub-agent, or the main agent. */
  readonly who: "sub" | "nested" | "main";
  readonly call: (marker: string) => { name: string; input: Record<string, unknown> };
}

const write = (marker: string) => ({ name: "Write", input: { file_path: marker, content: "x" } });
/** A program's write, not `touch` (which acceptEdits approves as an edit). */
const bash = (marker: string) => ({
  name: "Bash",
  input: { command: `${process.execPath} -e "require('fs').writeFileSync('${marker}','')"` },
});
const edit = (marker: string) => ({
  name: "Edit",
  input: { file_path: `${marker}.src`, old_string: "original", new_string: "changed" },
});

const modeCase = (
  from: PermissionMode,
  to: PermissionMode,
  who: ModeCase["who"],
  call: ModeCase["call"],
): ModeCase => {
  const kind = call === write ? "write" : call === bash ? "bash" : "edit";
  const id = `mode-${who}-${kind}-${from.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}-to-${to.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
  const whom =
    who === "main"
      ? "the main agent's next"
      : who === "sub"
        ? "a running sub-agent's"
        : "a sub-agent's own sub-agent's";
  return {
    id,
    area: "trust-patterns",
    what: `${from} → ${to} mid-turn; ${whom} ${kind}`,
    from,
    to,
    who,
    call,
  };
};

const CASES: readonly ModeCase[] = [
  modeCase("acceptEdits", "plan", "sub", write),
  modeCase("acceptEdits", "plan", "sub", edit),
  modeCase("acceptEdits", "plan", "nested", write),
  modeCase("acceptEdits", "plan", "main", write),
  modeCase("bypassPermissions", "plan", "sub", bash),
  modeCase("bypassPermissions", "plan", "sub", write),
  modeCase("bypassPermissions", "plan", "nested", edit),
  modeCase("bypassPermissions", "default", "sub", bash),
  modeCase("bypassPermissions", "default", "nested", bash),
  modeCase("bypassPermissions", "default", "main", bash),
  modeCase("acceptEdits", "dontAsk", "sub", edit),
  modeCase("acceptEdits", "dontAsk", "nested", write),
];

const text = (value: string): BrainReply => ({ content: [{ type: "text", text: value }] });
const uses = (calls: readonly { name: string; input: Record<string, unknown> }[]): BrainReply => ({
  content: calls.map((call) => ({ type: "tool_use", ...call })),
});

/**
 * One query for the cases of one change: each sub and nested case gets its own actor type
 * (`actor0` …); each actor reads its file, waits at its second request for the gate, then asks
 * for its call. The main agent's case is asked for in its second turn, after the change.
 */
async function runChange(cases: readonly ModeCase[], dir: string, change: boolean): Promise<Through[]> {
  const root = initRepo(join(freshDir(dir), "project"));
  const home = freshDir(dir, "home");
  const marker = (entry: ModeCase) => join(root, `${entry.id}.marker`);
  for (const entry of cases) writeFileSync(`${marker(entry)}.src`, "original\n");
  let opened: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    opened = resolve;
  });
  const agents = cases.map((entry, index) => ({ entry, actor: `actor${index}`, nester: `nester${index}` }));
  const main = agents.find(({ entry }) => entry.who === "main");
  // Requests counted per agent (a fork's messages start with its parent's, so turn numbers do not say).
  const counts = new Map<string, number>();
  const brain = async (request: BrainRequest): Promise<BrainReply> => {
    const source = request.querySource ?? "";
    const count = (counts.get(source) ?? 0) + 1;
    counts.set(source, count);
    if (source === "sdk") {
      if (count === 1)
        return uses([
          ...(main === undefined
            ? []
            : [{ name: "Read", input: { file_path: `${marker(main.entry)}.src` } }]),
          ...agents
            .filter(({ entry }) => entry.who !== "main")
            .map(({ entry, actor, nester }) => ({
              name: "Agent",
              input: {
                description: entry.id,
                prompt: "Do the task.",
                subagent_type: entry.who === "nested" ? nester : actor,
              },
            })),
        ]);
      if (count === 2 && main !== undefined) return uses([main.entry.call(marker(main.entry))]);
      return text("done (scripted)");
    }
    const nesting = agents.find(({ nester }) => source === `agent:${nester}`);
    if (nesting !== undefined)
      return count === 1
        ? uses([
            {
              name: "Agent",
              input: { description: "nested", prompt: "Do it.", subagent_type: nesting.actor },
            },
          ])
        : text("nested done (scripted)");
    const acting = agents.find(({ actor }) => source === `agent:${actor}`);
    if (acting === undefined) return text("done (scripted)");
    // Read the file an Edit changes first (Edit refuses a file it has not seen).
    if (count === 1) return uses([{ name: "Read", input: { file_path: `${marker(acting.entry)}.src` } }]);
    if (count === 2) {
      await gate;
      return uses([acting.entry.call(marker(acting.entry))]);
    }
    return text("actor done (scripted)");
  };
  const sim = await startSimulator({ brain });
  try {
    const first = cases[0] as ModeCase;
    const definitions = Object.fromEntries(
      agents.flatMap(({ actor, nester }) => [
        [actor, { description: "acts", prompt: "You act." }],
        [nester, { description: "starts an actor", prompt: "You start an actor." }],
      ]),
    );
    const run = query({
      prompt: "Start.",
      options: {
        cwd: root,
        env: { ...CREDENTIAL_ENV, ANTHROPIC_BASE_URL: sim.url, HOME: home, PATH: process.env.PATH ?? "" },
        permissionMode: first.from,
        allowDangerouslySkipPermissions: true,
        maxTurns: 6,
        agents: definitions,
        stderr: () => {},
      },
    });
    // Every sub-agent (and each nested one's own) has started; with only the main agent's case,
    // its first reply is out and its turn goes on.
    const needed = cases.reduce(
      (sum, entry) => sum + (entry.who === "nested" ? 2 : entry.who === "sub" ? 1 : 0),
      0,
    );
    let started = 0;
    let released = false;
    for await (const message of run) {
      if (released) continue;
      const ready =
        needed === 0
          ? message.type === "assistant"
          : message.type === "system" && message.subtype === "task_started" && ++started === needed;
      if (!ready) continue;
      released = true;
      if (change) await run.setPermissionMode(first.to);
      opened();
    }
    opened();
    const through: Through[] = [];
    for (const entry of cases) {
      const path = marker(entry);
      const attack = entry.call(path);
      if (
        existsSync(path) ||
        (attack.name === "Edit" && readFileSync(`${path}.src`, "utf8") !== "original\n")
      )
        through.push({
          id: entry.id,
          effect: `the ${entry.who} agent's ${attack.name} ran in ${entry.from}, not ${entry.to}`,
        });
    }
    return through;
  } finally {
    await sim.close();
  }
}

/** The cases grouped by their change. */
function changes(cases: readonly ModeCase[]): ModeCase[][] {
  const byChange = new Map<string, ModeCase[]>();
  for (const entry of cases) {
    const key = `${entry.from}>${entry.to}`;
    byChange.set(key, [...(byChange.get(key) ?? []), entry]);
  }
  return [...byChange.values()];
}

function everyChange(cases: readonly ModeCase[], change: boolean) {
  return async (dir: string) =>
    (
      await Promise.all(changes(cases).map((group, index) => runChange(group, join(dir, `${index}`), change)))
    ).flat();
}

export function modesGroup(title: string, cases: readonly ModeCase[]): CaseGroup {
  const surface: Surface = {
    label:
      "query() from @forkloop/sdk: setPermissionMode() during a turn, the next call of every running agent",
    run: everyChange(cases, true),
  };
  return {
    title,
    cases,
    surfaces: [surface],
    control: {
      label: "the same queries without the change: every call runs in the starting mode",
      expect: cases.map((entry) => entry.id),
      run: everyChange(cases, false),
    },
  };
}

export const groups: readonly CaseGroup[] = [
  modesGroup("R-S14: a mode changed during a turn reaches every running agent", CASES),
];
