// What a conformance program imports as "@anthropic-ai/claude-agent-sdk": every export of the SDK
// under test, with `query` wrapped to record, in order, each message the program receives, each
// hook and canUseTool call (with their inputs), and each Query method call and its outcome. One
// JSON line per event is appended synchronously to CONFORMANCE_TRACE, so the order is the order
// the program saw and a crash loses nothing already seen.
import { appendFileSync } from "node:fs";
import * as sdk from "@anthropic-ai/claude-agent-sdk";

export * from "@anthropic-ai/claude-agent-sdk";

const tracePath = process.env.CONFORMANCE_TRACE;
let queries = 0;

function record(event) {
  if (tracePath) appendFileSync(tracePath, `${JSON.stringify(event, jsonSafe)}\n`);
}

/** Functions, signals and other live objects become a marker naming what was there. */
function jsonSafe(_key, value) {
  if (typeof value === "function") return "<function>";
  if (typeof value === "bigint") return value.toString();
  if (value instanceof AbortSignal) return "<AbortSignal>";
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

function describeError(error) {
  return error instanceof Error ? { name: error.name, message: error.message } : { message: String(error) };
}

function recordedHooks(hooks, query) {
  if (!hooks) return hooks;
  const wrapped = {};
  for (const [event, matchers] of Object.entries(hooks)) {
    wrapped[event] = (matchers ?? []).map((matcher) => ({
      ...matcher,
      hooks: (matcher.hooks ?? []).map((hook) => async (input, toolUseID, context) => {
        record({ kind: "hook", query, event, input, toolUseID: toolUseID ?? null });
        return hook(input, toolUseID, context);
      }),
    }));
  }
  return wrapped;
}

function recordedCanUseTool(canUseTool, query) {
  if (!canUseTool) return canUseTool;
  return async (toolName, input, options) => {
    record({ kind: "canUseTool", query, toolName, input, options });
    return canUseTool(toolName, input, options);
  };
}

const ITERATION = new Set(["next", "return", "throw"]);

export function query(params) {
  const index = queries++;
  const options = params?.options;
  const given = options
    ? {
        ...params,
        options: {
          ...options,
          hooks: recordedHooks(options.hooks, index),
          canUseTool: recordedCanUseTool(options.canUseTool, index),
        },
      }
    : params;
  if (options && options.hooks === undefined) delete given.options.hooks;
  if (options && options.canUseTool === undefined) delete given.options.canUseTool;
  record({ kind: "query", query: index });
  const inner = sdk.query(given);
  const outer = new Proxy(inner, {
    get(target, property) {
      if (property === Symbol.asyncIterator) return () => outer;
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      if (property === "next") {
        return async (...args) => {
          try {
            const step = await value.apply(target, args);
            if (step.done) record({ kind: "end", query: index });
            else record({ kind: "message", query: index, message: step.value });
            return step;
          } catch (error) {
            record({ kind: "error", query: index, error: describeError(error) });
            throw error;
          }
        };
      }
      if (typeof property !== "string" || ITERATION.has(property)) return value.bind(target);
      return (...args) => {
        let result;
        try {
          result = value.apply(target, args);
        } catch (error) {
          record({ kind: "method", query: index, name: property, ok: false, error: describeError(error) });
          throw error;
        }
        if (result && typeof result.then === "function") {
          return result.then(
            (resolved) => {
              record({ kind: "method", query: index, name: property, ok: true, result: resolved ?? null });
              return resolved;
            },
            (error) => {
              record({
                kind: "method",
                query: index,
                name: property,
                ok: false,
                error: describeError(error),
              });
              throw error;
            },
          );
        }
        record({ kind: "method", query: index, name: property, ok: true, result: result ?? null });
        return result;
      };
    },
  });
  return outer;
}
