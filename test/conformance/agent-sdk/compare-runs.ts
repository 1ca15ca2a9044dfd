import { compareLastTexts, compareRequests } from "../support/compare-requests.js";
import { align, type Difference, diffFields, lineDiff, timelinesText } from "../support/differences.js";
import { Normaliser } from "../support/normalise.js";
import { type ProgramCase, scriptOf } from "./program-case.js";
import type { ProgramRun, Side } from "./run-program.js";
import { timeline } from "./timeline.js";

/** Each side's default model (what it sends when the program names none). */
export const DEFAULT_MODELS: Readonly<Record<Side, readonly string[]>> = {
  "agent-sdk": ["claude-opus-5-5"],
  forkloop: ["claude-opus-5-5"],
};

function normaliserFor(run: ProgramRun): Normaliser {
  const normaliser = new Normaliser({
    dirs: { work: run.dirs.work, home: run.dirs.home, tmp: run.dirs.tmp, run: run.dirs.root },
    defaultModels: DEFAULT_MODELS[run.side],
  });
  normaliser.learn(run.events);
  return normaliser;
}

/**
 * Every difference between the real Agent SDK's run of a program and forkloop's: how each run
 * ended, what it printed, what the program saw in order (messages, hooks, canUseTool, Query
 * methods) field by field, the requests by role, and the sessions each left.
 */
export function compareRuns(peer: ProgramRun, forkloop: ProgramRun, programCase: ProgramCase): Difference[] {
  const out: Difference[] = [];
  const a = normaliserFor(peer);
  const b = normaliserFor(forkloop);
  for (const run of [peer, forkloop]) {
    if (run.timedOut) out.push({ code: `run.timeout ${run.side}`, detail: run.stderr.slice(-400) });
    for (const failure of run.scriptFailures)
      out.push({ code: `run.unscripted-request ${run.side}`, detail: failure });
  }
  if (peer.exitCode !== forkloop.exitCode) {
    out.push({
      code: "run.exit-code",
      detail: `peer: ${peer.exitCode}, forkloop: ${forkloop.exitCode}\n${forkloop.stderr.slice(-400)}`,
    });
  }
  const text = (normaliser: Normaliser, value: string) =>
    (normaliser.normalise(value) as string).replace(/\(node:\d+\)/g, "(node:<pid>)");
  // The code names the differing lines (normalised), so an entry for one program's output does
  // not hide another change in it.
  const stdout = lineDiff(text(a, peer.stdout), text(b, forkloop.stdout));
  if (stdout !== undefined) out.push({ code: `run.stdout ${oneLine(stdout)}`, detail: stdout });
  const stderr = lineDiff(text(a, peer.stderr), text(b, forkloop.stderr));
  if (stderr !== undefined)
    out.push({ code: `run.stderr ${oneLine(stderr.split("\n")[0] ?? "")}`, detail: stderr });

  out.push(...compareTimelines(peer, forkloop, a, b));
  out.push(
    ...compareRequests(
      { records: peer.requests, text: (value) => text(a, value) },
      { records: forkloop.requests, text: (value) => text(b, value) },
      { tasks: scriptOf(programCase).tasks ?? [], systemTexts: programCase.systemTexts ?? [] },
    ),
  );
  out.push(
    ...compareLastTexts(
      peer.requests,
      forkloop.requests,
      { main: programCase.lastRequestTexts, subAgent: programCase.subAgentLastRequestTexts },
      scriptOf(programCase).tasks ?? [],
    ),
  );
  out.push(...compareSessions(peer, forkloop, a, b));
  return unique(out);
}

/** Both runs' timelines (messages, hooks, canUseTool and Query method calls in order) and their diff. */
export function describeTimelines(peer: ProgramRun, forkloop: ProgramRun): string {
  const signatures = (run: ProgramRun) =>
    timeline(run.events, normaliserFor(run)).map((item) => item.signature);
  return timelinesText("timeline", signatures(peer), signatures(forkloop));
}

/** One difference per code (the first one's detail): a field missing from every message is one. */
function unique(differences: Difference[]): Difference[] {
  const seen = new Map<string, Difference>();
  for (const difference of differences) if (!seen.has(difference.code)) seen.set(difference.code, difference);
  return [...seen.values()];
}

function oneLine(text: string): string {
  const line = text.replace(/\n/g, " | ");
  return line.length > 240 ? `${line.slice(0, 240)}…` : line;
}

function compareTimelines(
  peer: ProgramRun,
  forkloop: ProgramRun,
  a: Normaliser,
  b: Normaliser,
): Difference[] {
  const out: Difference[] = [];
  const { pairs, onlyPeer, onlyForkloop } = align(
    timeline(peer.events, a),
    timeline(forkloop.events, b),
    (item) => item.signature,
  );
  for (const [x, y] of pairs) diffFields(x.scope, x.value, y.value, out);
  const moved = new Set(
    onlyPeer
      .map((item) => item.signature)
      .filter((sig) => onlyForkloop.some((item) => item.signature === sig)),
  );
  for (const signature of moved)
    out.push({ code: `timeline.order ${signature}`, detail: "on both sides, in another order" });
  for (const item of onlyPeer.filter((i) => !moved.has(i.signature))) {
    out.push({
      code: `timeline.missing ${item.signature}`,
      detail: JSON.stringify(item.value).slice(0, 400),
    });
  }
  for (const item of onlyForkloop.filter((i) => !moved.has(i.signature))) {
    out.push({ code: `timeline.extra ${item.signature}`, detail: JSON.stringify(item.value).slice(0, 400) });
  }
  return out;
}

/**
 * The sessions each side stored, by normalised session id: a session's transcript and its
 * sub-agents' transcripts. Where and in which format they are stored differs by design
 * (`sessions.store`, always reported, allowlisted with the reason).
 */
function compareSessions(peer: ProgramRun, forkloop: ProgramRun, a: Normaliser, b: Normaliser): Difference[] {
  const listing = (run: ProgramRun, normaliser: Normaliser) =>
    run.homeFiles
      .flatMap((file) => {
        const session = /projects\/[^/]+\/(?:sessions\/)?([0-9a-f-]{36})\.(?:jsonl|fltr)$/.exec(file);
        if (session) return [`session ${normaliser.normalise(session[1])}`];
        const sub = /projects\/[^/]+\/(?:sessions\/)?([0-9a-f-]{36})[./].*agent[^/]*$/.exec(file);
        return sub ? [`sub-agent transcript of ${normaliser.normalise(sub[1])}`] : [];
      })
      .sort();
  const x = listing(peer, a);
  const y = listing(forkloop, b);
  const out: Difference[] = [
    { code: "sessions.store", detail: `peer: ${storeOf(peer)}\nforkloop: ${storeOf(forkloop)}` },
  ];
  const diff = lineDiff(x.join("\n"), y.join("\n"));
  if (diff !== undefined) out.push({ code: "sessions.listing", detail: diff });
  return out;
}

function storeOf(run: ProgramRun): string {
  return run.homeFiles.find((file) => /projects\//.test(file)) ?? "(no session stored)";
}
