/**
 * Normalising what must differ between two runs of the same program: ids, times, durations,
 * token counts and costs, the run's own directories, and each side's default model. What is left
 * is compared as is. Shared by the Agent SDK harness and the CLI harness (stream-json lines have
 * the same fields).
 */

/** Fields whose values are ids: numbered by first appearance (`<session:1>`), or plain. */
const NUMBERED_ID_FIELDS: Readonly<Record<string, string>> = {
  session_id: "session",
  sessionId: "session",
  task_id: "agent",
  agent_id: "agent",
  agentId: "agent",
  agentID: "agent",
};
const PLAIN_ID_FIELDS = new Set([
  "uuid",
  "prompt_id",
  "run_id",
  "runId",
  "request_id",
  "requestId",
  "id_token",
]);
const TIME_FIELDS = new Set([
  "timestamp",
  "written_at",
  "end_time",
  "start_time",
  "created_at",
  "lastModified",
]);
/** Objects whose numbers are token counts (they differ with each side's prompts). */
const COUNT_OBJECTS = new Set(["usage", "modelUsage", "model_usage_since_last_result", "context_management"]);
/**
 * Token counts outside those objects (the Agent tool's output: its last request's tokens; a
 * resumed session's SessionStart: its last request's tokens, which differ with each side's prompts).
 */
const COUNT_FIELDS = new Set(["totalTokens", "context_tokens"]);
/** Seconds between two moments of a run (a resumed SessionStart's: since the last reply). */
const SECONDS_FIELDS = new Set(["seconds_since_last_response"]);
/** Prices of token counts outside `cost` fields (a resumed SessionStart's: re-caching its last request). */
const PRICE_FIELDS = new Set(["estimated_cache_write_usd"]);

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const TOOL_USE_ID = /\b(?:toolu|srvtoolu)_[A-Za-z0-9]+/g;
/** The API's (and the simulator's) message and request ids; not `msg_lifecycle_v1`. */
const MESSAGE_ID = /\bmsg_(?:sim_)?[A-Za-z0-9]{12,}\b/g;
const REQUEST_ID = /\breq_(?:sim_)?[A-Za-z0-9]{12,}\b/g;
const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\b/g;
/** The token count and duration in an Agent call's hand-back (`<usage>subagent_tokens: N …</usage>`). */
const HAND_BACK_TOKENS = /\bsubagent_tokens: \d+/g;
const HAND_BACK_DURATION = /\bduration_ms: \d+(?=<\/usage>)/g;

export interface NormaliseContext {
  /** The run's directories, replaced by their names (`<work>`, `<home>`, …); longest first wins. */
  dirs: Readonly<Record<string, string>>;
  /** Model ids the side chose by itself (its defaults): `<default model>`; given ones stay. */
  defaultModels: readonly string[];
}

export class Normaliser {
  private readonly numbered = new Map<string, string>();
  private readonly counters = new Map<string, number>();
  private readonly dirs: [string, string][];

  constructor(private readonly context: NormaliseContext) {
    this.dirs = Object.entries(context.dirs)
      .sort((a, b) => b[1].length - a[1].length)
      .map(([name, path]) => [path, `<${name}>`]);
  }

  /**
   * Learns the ids of `value` in order of appearance (call on the whole run first, so an id met
   * inside a string before its own field is still numbered the same).
   */
  learn(value: unknown, key = ""): void {
    if (typeof value === "string") {
      const kind = NUMBERED_ID_FIELDS[key];
      if (kind !== undefined) this.number(kind, value);
      for (const id of value.match(TOOL_USE_ID) ?? []) this.number("toolu", id);
      return;
    }
    if (Array.isArray(value)) for (const item of value) this.learn(item, key);
    else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) this.learn(v, k);
    }
  }

  normalise(value: unknown, key = "", inCounts = false): unknown {
    if (typeof value === "string") return this.string(value, key);
    if (typeof value === "number") return this.number_(value, key, inCounts);
    if (Array.isArray(value)) return value.map((item) => this.normalise(item, key, inCounts));
    if (value !== null && typeof value === "object") {
      const counts = inCounts || COUNT_OBJECTS.has(key);
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        // modelUsage is keyed by model id.
        out[key === "modelUsage" || key === "model_usage_since_last_result" ? this.model(k) : k] =
          this.normalise(v, k, counts);
      }
      return out;
    }
    return value;
  }

  private number(kind: string, id: string): string {
    const known = this.numbered.get(id);
    if (known !== undefined) return known;
    const n = (this.counters.get(kind) ?? 0) + 1;
    this.counters.set(kind, n);
    const placeholder = `<${kind}:${n}>`;
    this.numbered.set(id, placeholder);
    return placeholder;
  }

  private string(value: string, key: string): string {
    const kind = NUMBERED_ID_FIELDS[key];
    if (kind !== undefined) return this.number(kind, value);
    if (PLAIN_ID_FIELDS.has(key)) return "<id>";
    if (TIME_FIELDS.has(key)) return "<time>";
    if (key === "model" || key === "canonicalModel") return this.model(value);
    let out = value;
    for (const [path, name] of this.dirs) out = out.split(path).join(name);
    out = out.replace(TOOL_USE_ID, (id) => this.number("toolu", id));
    out = out.replace(UUID, (id) => this.numbered.get(id) ?? "<uuid>");
    for (const [id, placeholder] of this.numbered)
      if (out.includes(id)) out = out.split(id).join(placeholder);
    out = out.replace(MESSAGE_ID, "<msg>").replace(REQUEST_ID, "<req>");
    return out
      .replace(ISO_TIME, "<time>")
      .replace(HAND_BACK_TOKENS, "subagent_tokens: <n>")
      .replace(HAND_BACK_DURATION, "duration_ms: <ms>");
  }

  private number_(value: number, key: string, inCounts: boolean): number | string {
    if (TIME_FIELDS.has(key)) return "<time>";
    if (/(^|_)ms$|Ms$|^duration/i.test(key)) return "<ms>";
    if (SECONDS_FIELDS.has(key)) return "<s>";
    if (/cost/i.test(key) || PRICE_FIELDS.has(key)) return "<usd>";
    if (inCounts || COUNT_FIELDS.has(key)) return "<n>";
    return value;
  }

  private model(value: string): string {
    return this.context.defaultModels.includes(value) ? "<default model>" : value;
  }
}
