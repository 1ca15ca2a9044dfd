import {
  compareLastTexts,
  compareRequests,
  placeOf,
  textPlacementDifferences,
} from "../support/compare-requests.js";
import { align, type Difference, diffFields, show, timelinesText } from "../support/differences.js";
import { messageSignature, scopeOf } from "../support/message-signature.js";
import { Normaliser } from "../support/normalise.js";
import type { CliRun, Side } from "./run-scenario.js";
import { type CliScenario, scriptOf } from "./scenario.js";

/** Each side's default model (what it sends when nothing names one). */
export const DEFAULT_MODELS: Readonly<Record<Side, readonly string[]>> = {
  claude: ["claude-opus-5-5"],
  forkloop: ["claude-opus-5-5"],
};

/** Request headers compared on the first main request: how it authenticates and which API it asks for. */
const HEADERS = ["x-api-key", "authorization", "anthropic-version", "anthropic-beta"] as const;

/** Lines of text output reported one by one, at most (the rest is in the last one's detail). */
const MAX_LINES = 8;

function normaliserFor(run: CliRun): Normaliser {
  const normaliser = new Normaliser({
    dirs: {
      work: run.dirs.work,
      home: run.dirs.home,
      tmp: run.dirs.tmp,
      run: run.dirs.root,
      ...Object.fromEntries(
        run.madeUpWorktreeNames.map((name, i) => [`made-up name${i === 0 ? "" : ` ${i + 1}`}`, name]),
      ),
    },
    defaultModels: DEFAULT_MODELS[run.side],
  });
  for (const step of [...run.before, run]) normaliser.learn(jsonLines(step.stdout));
  normaliser.learn(run.hookInputs);
  return normaliser;
}

/**
 * Every difference between `claude <args>` and `forkloop <args>`: how each step ended, what the
 * compared step printed (text line by line; json field by field; stream-json lines aligned by
 * their signature, then field by field), stderr line by line, the hooks' inputs in order, the
 * requests by role (parameters, tools, texts, headers), and the files each changed.
 */
export function compareCliRuns(peer: CliRun, forkloop: CliRun, scenario: CliScenario): Difference[] {
  const out: Difference[] = [];
  const a = normaliserFor(peer);
  const b = normaliserFor(forkloop);
  const text = (normaliser: Normaliser, value: string) => normaliser.normalise(value) as string;
  for (const run of [peer, forkloop]) {
    for (const step of [...run.before, run]) {
      if (step.timedOut) out.push({ code: `run.timeout ${run.side}`, detail: step.stderr.slice(-400) });
    }
    for (const failure of run.scriptFailures)
      out.push({ code: `run.unscripted-request ${run.side}`, detail: failure });
  }
  for (const [i, step] of peer.before.entries()) {
    const other = forkloop.before[i];
    if (other !== undefined && other.exitCode !== step.exitCode) {
      out.push({
        code: `run.exit-code before[${i}]`,
        detail: `peer: ${step.exitCode}, forkloop: ${other.exitCode}\n${other.stderr.slice(-400)}`,
      });
    }
  }
  if (peer.exitCode !== forkloop.exitCode) {
    out.push({
      code: "run.exit-code",
      detail: `peer: ${peer.exitCode}, forkloop: ${forkloop.exitCode}\n${forkloop.stderr.slice(-400)}`,
    });
  }
  out.push(...compareStdout(peer, forkloop, a, b, outputFormat(peer.args)));
  out.push(...compareUuidReuse(peer, forkloop));
  out.push(...lineDifferences("run.stderr", text(a, peer.stderr), text(b, forkloop.stderr)));
  out.push(...compareHooks(peer, forkloop, a, b));
  const script = scriptOf(scenario);
  out.push(
    ...compareRequests(
      { records: peer.requests, text: (value) => text(a, value) },
      { records: forkloop.requests, text: (value) => text(b, value) },
      { tasks: script.tasks ?? [], systemTexts: scenario.systemTexts ?? [] },
    ),
  );
  out.push(...compareHeaders(peer, forkloop));
  out.push(...compareBetas(peer, forkloop, scenario.betas ?? []));
  out.push(...compareRequestTexts(peer, forkloop, scenario.requestTexts ?? []));
  out.push(
    ...compareLastTexts(
      peer.requests,
      forkloop.requests,
      { main: scenario.lastRequestTexts, subAgent: scenario.subAgentLastRequestTexts },
      scriptOf(scenario).tasks ?? [],
    ),
  );
  out.push(...compareFiles(peer, forkloop, a, b));
  out.push(...lineDifferences("run.git", text(a, peer.gitState), text(b, forkloop.gitState)));
  return unique(out);
}

/** Both runs' hook calls and stream-json lines in order, and their diffs. */
export function describeTimelines(peer: CliRun, forkloop: CliRun): string {
  const hooks = (run: CliRun) => run.hookInputs.map(hookSignature);
  const lines = (run: CliRun) => jsonLines(run.stdout).map(messageSignature);
  return [
    timelinesText("hooks", hooks(peer), hooks(forkloop)),
    timelinesText("stdout lines", lines(peer), lines(forkloop)),
  ].join("\n");
}

function outputFormat(args: readonly string[]): string {
  const i = args.indexOf("--output-format");
  const inline = args.find((arg) => arg.startsWith("--output-format="));
  return inline?.split("=")[1] ?? (i >= 0 ? (args[i + 1] ?? "text") : "text");
}

function jsonLines(stdout: string): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  for (const line of stdout.split("\n")) {
    if (!line.trimStart().startsWith("{")) continue;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a JSON line: compared as text
    }
  }
  return lines;
}

function compareStdout(
  peer: CliRun,
  forkloop: CliRun,
  a: Normaliser,
  b: Normaliser,
  format: string,
): Difference[] {
  if (format === "text")
    return lineDifferences(
      "run.stdout",
      a.normalise(peer.stdout) as string,
      b.normalise(forkloop.stdout) as string,
    );
  const out: Difference[] = [];
  const x = jsonLines(peer.stdout);
  const y = jsonLines(forkloop.stdout);
  for (const [run, lines] of [
    [peer, x],
    [forkloop, y],
  ] as const) {
    const count = run.stdout.split("\n").filter((line) => line.trim() !== "").length;
    if (count !== lines.length)
      out.push({ code: `run.stdout-not-json ${run.side}`, detail: run.stdout.slice(0, 400) });
  }
  const { pairs, onlyPeer, onlyForkloop } = align(
    x.map((line) => ({ signature: messageSignature(line), line })),
    y.map((line) => ({ signature: messageSignature(line), line })),
    (item) => item.signature,
  );
  for (const [p, f] of pairs) diffFields(scopeOf(p.signature), a.normalise(p.line), b.normalise(f.line), out);
  const moved = new Set(
    onlyPeer
      .map((item) => item.signature)
      .filter((sig) => onlyForkloop.some((item) => item.signature === sig)),
  );
  for (const signature of moved)
    out.push({ code: `line.order ${signature}`, detail: "on both sides, in another order" });
  for (const item of onlyPeer.filter((i) => !moved.has(i.signature)))
    out.push({ code: `line.missing ${item.signature}`, detail: show(a.normalise(item.line)) });
  for (const item of onlyForkloop.filter((i) => !moved.has(i.signature)))
    out.push({ code: `line.extra ${item.signature}`, detail: show(b.normalise(item.line)) });
  return out;
}

/** One difference per differing line (`- ` only the peer's, `+ ` only forkloop's). */
function lineDifferences(kind: string, peer: string, forkloop: string): Difference[] {
  if (peer === forkloop) return [];
  const lines = (value: string) => value.split("\n").filter((line) => line.trim() !== "");
  const { onlyPeer, onlyForkloop } = align(lines(peer), lines(forkloop), (line) => line);
  const differing = [...onlyPeer.map((line) => `- ${line}`), ...onlyForkloop.map((line) => `+ ${line}`)];
  const out = differing.slice(0, MAX_LINES).map((line) => ({
    code: `${kind} ${line.length > 240 ? `${line.slice(0, 240)}…` : line}`,
    detail: `peer:\n${peer.slice(0, 400)}\nforkloop:\n${forkloop.slice(0, 400)}`,
  }));
  if (differing.length > MAX_LINES)
    out.push({ code: `${kind} (more lines)`, detail: differing.slice(MAX_LINES).join("\n").slice(0, 800) });
  return out;
}

function hookSignature(input: Record<string, unknown>): string {
  const tool = typeof input.tool_name === "string" ? `(${input.tool_name})` : "";
  const agent = typeof input.agent_id === "string" ? "@sub" : "";
  return `hook:${String(input.hook_event_name)}${agent}${tool}`;
}

function compareHooks(peer: CliRun, forkloop: CliRun, a: Normaliser, b: Normaliser): Difference[] {
  const out: Difference[] = [];
  const items = (run: CliRun) => run.hookInputs.map((input) => ({ signature: hookSignature(input), input }));
  const { pairs, onlyPeer, onlyForkloop } = align(items(peer), items(forkloop), (item) => item.signature);
  for (const [p, f] of pairs)
    diffFields(scopeOf(p.signature), a.normalise(p.input), b.normalise(f.input), out);
  const moved = new Set(
    onlyPeer
      .map((item) => item.signature)
      .filter((sig) => onlyForkloop.some((item) => item.signature === sig)),
  );
  for (const signature of moved)
    out.push({ code: `hook.order ${signature}`, detail: "on both sides, in another order" });
  for (const item of onlyPeer.filter((i) => !moved.has(i.signature)))
    out.push({ code: `hook.missing ${item.signature}`, detail: show(a.normalise(item.input)) });
  for (const item of onlyForkloop.filter((i) => !moved.has(i.signature)))
    out.push({ code: `hook.extra ${item.signature}`, detail: show(b.normalise(item.input)) });
  return out;
}

/**
 * The first main request's headers that a gateway or proxy reads: the credential's header (the
 * key's value itself differs per run, so only its presence), the API version and the betas.
 */
function compareHeaders(peer: CliRun, forkloop: CliRun): Difference[] {
  const first = (run: CliRun) => run.requests.find((record) => record.path === "/v1/messages")?.headers;
  const x = first(peer);
  const y = first(forkloop);
  if (x === undefined || y === undefined) return [];
  const out: Difference[] = [];
  for (const name of HEADERS) {
    const value = (headers: Record<string, string | undefined>) =>
      name === "x-api-key" || name === "authorization"
        ? headers[name] === undefined
          ? undefined
          : name === "authorization"
            ? headers[name]?.split(" ")[0]
            : "(set)"
        : name === "anthropic-beta"
          ? headers[name]
              ?.split(",")
              .map((beta) => beta.trim())
              .sort()
              .join(",")
          : headers[name];
    const p = value(x);
    const f = value(y);
    if (p !== f)
      out.push({ code: `request.header ${name}`, detail: `peer: ${show(p)}\nforkloop: ${show(f)}` });
  }
  return out;
}

/**
 * Whether the first main request's `anthropic-beta` holds each beta the command line asked for
 * (the header as a whole differs: each side adds the betas of its own features).
 */
function compareBetas(peer: CliRun, forkloop: CliRun, betas: readonly string[]): Difference[] {
  const holds = (run: CliRun, beta: string) => {
    const header = run.requests.find((record) => record.path === "/v1/messages")?.headers["anthropic-beta"];
    return (header ?? "").split(",").some((given) => given.trim() === beta);
  };
  return betas
    .filter((beta) => holds(peer, beta) !== holds(forkloop, beta))
    .map((beta) => ({
      code: `request.beta ${beta}`,
      detail: `peer: ${holds(peer, beta) ? "sent" : "not sent"}\nforkloop: ${holds(forkloop, beta) ? "sent" : "not sent"}`,
    }));
}

/**
 * Where each text reaches the model in the first main request: the system prompt, the messages
 * (a user message or a reminder in one), or nowhere.
 */
function compareRequestTexts(peer: CliRun, forkloop: CliRun, texts: readonly string[]): Difference[] {
  const placement = (run: CliRun, value: string) => {
    const record = run.requests.find((r) => r.path === "/v1/messages");
    if (record === undefined) return "no request";
    const body = JSON.parse(record.rawBody) as { system?: unknown; messages?: unknown };
    return placeOf(value, { system: body.system, messages: body.messages });
  };
  return textPlacementDifferences(
    texts,
    (value) => [placement(peer, value), placement(forkloop, value)],
    (value) => `request.text ${value.slice(0, 60)}`,
  );
}

function compareFiles(peer: CliRun, forkloop: CliRun, a: Normaliser, b: Normaliser): Difference[] {
  const out: Difference[] = [];
  for (const path of new Set([...Object.keys(peer.changedFiles), ...Object.keys(forkloop.changedFiles)])) {
    const x = peer.changedFiles[path];
    const y = forkloop.changedFiles[path];
    if (!(path in forkloop.changedFiles)) out.push({ code: `files.missing ${path}`, detail: show(x) });
    else if (!(path in peer.changedFiles)) out.push({ code: `files.extra ${path}`, detail: show(y) });
    else {
      const p = x === null || x === undefined ? x : a.normalise(x);
      const f = y === null || y === undefined ? y : b.normalise(y);
      if (p !== f)
        out.push({ code: `files.value ${path}`, detail: `peer: ${show(p)}\nforkloop: ${show(f)}` });
    }
  }
  return out;
}

/** One difference per code (the first one's detail): a field missing from every line is one. */
function unique(differences: Difference[]): Difference[] {
  const seen = new Map<string, Difference>();
  for (const difference of differences) if (!seen.has(difference.code)) seen.set(difference.code, difference);
  return [...seen.values()];
}

/**
 * Lines that repeat an earlier line's uuid (the normaliser replaces uuids, so the field diff
 * cannot see it): consumers key on a line's uuid, and Claude Code never repeats one.
 */
function compareUuidReuse(peer: CliRun, forkloop: CliRun): Difference[] {
  const reused = (run: CliRun) => {
    const seen = new Set<unknown>();
    const out = new Set<string>();
    for (const line of jsonLines(run.stdout)) {
      if (line.uuid === undefined) continue;
      if (seen.has(line.uuid)) out.add(messageSignature(line));
      seen.add(line.uuid);
    }
    return out;
  };
  const before = reused(peer);
  return [...reused(forkloop)]
    .filter((sig) => !before.has(sig))
    .map((sig) => ({ code: `line.uuid-reused ${sig}`, detail: "a line repeats an earlier line's uuid" }));
}
