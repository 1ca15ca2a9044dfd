import type { RequestRecord } from "@forkloop/sim";
import { compareToolSchemas } from "./compare-tool-schemas.js";
import { type RequestBody, systemText, userText } from "./conversation-text.js";
import { type Difference, deepEqual, show } from "./differences.js";
import { roleName, roleOf } from "./request-roles.js";

/** Body fields compared as parameters (the rest — messages, system, tools — have their own rules). */
const NOT_PARAMS = new Set(["messages", "system", "tools", "stream", "metadata"]);

export interface RequestSide {
  records: readonly RequestRecord[];
  /** The side's normaliser for text (its run's paths and ids). */
  text: (value: string) => string;
}

/**
 * The requests of two runs, matched by role (main, each sub-agent task, side calls), never by
 * position. For each role: whether both sides sent it, how many requests, the first
 * request's parameters (as sent), tool names (built-in and MCP apart), first user message (its
 * own text) and which of the program's own texts its system prompt holds, and the input schema of
 * each tool both sides sent in any of its requests (compare-tool-schemas.ts). A request the
 * simulator refused without being asked to (a validation error) is reported as refused.
 */
export function compareRequests(
  peer: RequestSide,
  forkloop: RequestSide,
  options: { tasks: readonly string[]; systemTexts: readonly string[] },
): Difference[] {
  const out: Difference[] = [];
  const peerRoles = byRole(peer.records, options.tasks, out, "peer");
  const forkloopRoles = byRole(forkloop.records, options.tasks, out, "forkloop");
  for (const role of new Set([...peerRoles.keys(), ...forkloopRoles.keys()])) {
    const a = peerRoles.get(role) ?? [];
    const b = forkloopRoles.get(role) ?? [];
    if (a.length === 0 || b.length === 0) {
      out.push({
        code: `request.${a.length === 0 ? "extra" : "missing"} ${role}`,
        detail: `peer: ${a.length} requests, forkloop: ${b.length}`,
      });
      continue;
    }
    if (a.length !== b.length)
      out.push({ code: `request.count ${role}`, detail: `peer: ${a.length}, forkloop: ${b.length}` });
    compareFirst(role, a[0] as RequestBody, b[0] as RequestBody, peer, forkloop, options.systemTexts, out);
    compareToolSchemas(role, a, b, out);
  }
  return out;
}

function byRole(
  records: readonly RequestRecord[],
  tasks: readonly string[],
  out: Difference[],
  side: string,
): Map<string, RequestBody[]> {
  const roles = new Map<string, RequestBody[]>();
  for (const record of records) {
    if (record.path !== "/v1/messages") continue;
    const body = JSON.parse(record.rawBody) as RequestBody;
    const role = roleName(roleOf(body, tasks));
    if (record.status >= 400 && record.fault === null) {
      out.push({
        code: `request.refused-by-simulator ${side} ${role}`,
        detail: record.error?.message ?? `status ${record.status}`,
      });
      continue;
    }
    roles.set(role, [...(roles.get(role) ?? []), body]);
  }
  return roles;
}

function compareFirst(
  role: string,
  a: RequestBody,
  b: RequestBody,
  peer: RequestSide,
  forkloop: RequestSide,
  systemTexts: readonly string[],
  out: Difference[],
): void {
  const params = new Set([...Object.keys(a), ...Object.keys(b)].filter((key) => !NOT_PARAMS.has(key)));
  for (const key of params) {
    const x = (a as unknown as Record<string, unknown>)[key];
    const y = (b as unknown as Record<string, unknown>)[key];
    if (!deepEqual(x, y))
      out.push({ code: `request.param ${role}.${key}`, detail: `peer: ${show(x)}\nforkloop: ${show(y)}` });
  }
  const tools = (body: RequestBody) => (body.tools ?? []).map((tool) => tool.name);
  for (const [kind, pick] of [
    ["builtin", (name: string) => !name.startsWith("mcp__")],
    ["mcp", (name: string) => name.startsWith("mcp__")],
  ] as const) {
    const x = tools(a).filter(pick);
    const y = tools(b).filter(pick);
    const onlyPeer = x.filter((name) => !y.includes(name));
    const onlyForkloop = y.filter((name) => !x.includes(name));
    if (onlyPeer.length || onlyForkloop.length) {
      out.push({
        code: `request.tools.${kind} ${role}`,
        detail: `only peer: ${onlyPeer.join(", ") || "-"}\nonly forkloop: ${onlyForkloop.join(", ") || "-"}`,
      });
    }
  }
  const first = (body: RequestBody, side: RequestSide) => {
    const message = body.messages.find((m) => m.role === "user");
    return message ? side.text(userText(message.content)) : "";
  };
  const x = first(a, peer);
  const y = first(b, forkloop);
  if (x !== y)
    out.push({ code: `request.first-user-text ${role}`, detail: `peer: ${show(x)}\nforkloop: ${show(y)}` });
  for (const text of systemTexts) {
    const inPeer = systemText(a).includes(text);
    const inForkloop = systemText(b).includes(text);
    if (inPeer !== inForkloop) {
      out.push({
        code: `request.system-text ${role}`,
        detail: `${show(text)} is in the system prompt of ${inPeer ? "the peer" : "forkloop"} only`,
      });
    }
  }
}

/**
 * Where each text is in the last request of the main loop (or, with `kind` "sub-agent", of the
 * sub-agents): the system prompt, a `role: "system"` message, a user message. The places are part
 * of the code, so an entry naming one placement does not also excuse the text going missing.
 */
export function compareLastRequestTexts(
  peer: readonly RequestRecord[],
  forkloop: readonly RequestRecord[],
  texts: readonly string[],
  tasks: readonly string[],
  kind: "main" | "sub-agent" = "main",
): Difference[] {
  const placement = (requests: readonly RequestRecord[], value: string) => {
    const main = requests
      .filter((r) => r.path === "/v1/messages")
      .map((r) => JSON.parse(r.rawBody) as RequestBody & { system?: unknown })
      .filter((body) => roleOf(body, tasks).kind === kind);
    const body = main.at(-1);
    if (body === undefined) return "no-request";
    const messages = body.messages ?? [];
    return placeOf(value, {
      "system-prompt": body.system,
      "system-message": messages.filter((m) => m.role === "system"),
      "user-message": messages.filter((m) => m.role === "user"),
    });
  };
  return textPlacementDifferences(
    texts,
    (value) => [placement(peer, value), placement(forkloop, value)],
    (value, p, f) => `request.last-text ${p}/${f} ${value.slice(0, 60)}`,
  );
}

/** compareLastRequestTexts for the main loop's texts and for the sub-agents'. */
export function compareLastTexts(
  peer: readonly RequestRecord[],
  forkloop: readonly RequestRecord[],
  texts: { readonly main?: readonly string[] | undefined; readonly subAgent?: readonly string[] | undefined },
  tasks: readonly string[],
): Difference[] {
  return [
    ...compareLastRequestTexts(peer, forkloop, texts.main ?? [], tasks),
    ...compareLastRequestTexts(peer, forkloop, texts.subAgent ?? [], tasks, "sub-agent"),
  ];
}

/** The names of the parts that hold `value` (as JSON text), joined by `+`, or "nowhere". */
export function placeOf(value: string, parts: Readonly<Record<string, unknown>>): string {
  const needle = JSON.stringify(value).slice(1, -1);
  const where = Object.entries(parts)
    .filter(([, part]) => JSON.stringify(part ?? "").includes(needle))
    .map(([name]) => name);
  return where.length === 0 ? "nowhere" : where.join("+");
}

/** One difference for each text whose placement differs between the sides. */
export function textPlacementDifferences(
  texts: readonly string[],
  placements: (value: string) => readonly [peer: string, forkloop: string],
  code: (value: string, peer: string, forkloop: string) => string,
): Difference[] {
  const out: Difference[] = [];
  for (const value of texts) {
    const [p, f] = placements(value);
    if (p !== f) out.push({ code: code(value, p, f), detail: `peer: in ${p}\nforkloop: in ${f}` });
  }
  return out;
}
