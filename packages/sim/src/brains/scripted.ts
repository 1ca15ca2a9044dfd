import type { FaultKind } from "../faults.js";
import { type Scenario, type ScenarioRule, textConditionRegex } from "../scenario.js";
import { SimError } from "../sim-error.js";
import type { Brain, BrainReply, BrainRequest } from "../types.js";

/** Raised when no rule matches and the scenario has no fallback. */
export class NoMatchingRuleError extends SimError {
  override readonly name = "NoMatchingRuleError";
  constructor(message: string) {
    super("no_matching_rule", message);
  }
}

/**
 * A brain that replies by a scenario's rules: the first matching rule wins; a rule with `times`
 * is used at most that many times (counted per brain, so each simulator starts fresh).
 */
export function scriptedBrain(scenario: Scenario): Brain {
  const uses = new Map<ScenarioRule, number>();
  return (request) => {
    for (const rule of scenario.rules) {
      const used = uses.get(rule) ?? 0;
      if (rule.times !== undefined && used >= rule.times) continue;
      if (!matches(rule, request)) continue;
      uses.set(rule, used + 1);
      const reply: BrainReply = rule.reply ?? { content: [] };
      return rule.fault ? { ...reply, fault: rule.fault as FaultKind } : reply;
    }
    if (scenario.fallback) return scenario.fallback;
    throw new NoMatchingRuleError(
      `scenario${scenario.name ? ` "${scenario.name}"` : ""}: no rule matches turn ${request.turnIndex} (last user text: ${JSON.stringify(request.lastUserText?.slice(0, 80) ?? null)})`,
    );
  };
}

function matches(rule: ScenarioRule, request: BrainRequest): boolean {
  const m = rule.match;
  if (m.turn !== undefined) {
    if (typeof m.turn === "number") {
      if (request.turnIndex !== m.turn) return false;
    } else if (
      (m.turn.min !== undefined && request.turnIndex < m.turn.min) ||
      (m.turn.max !== undefined && request.turnIndex > m.turn.max)
    ) {
      return false;
    }
  }
  if (m.lastUserText !== undefined && !textMatches(m.lastUserText, request.lastUserText)) return false;
  if (
    m.lastToolResult !== undefined &&
    !request.lastToolResults.some((r) => textMatches(m.lastToolResult ?? "", r.content))
  ) {
    return false;
  }
  if (m.querySource !== undefined && m.querySource !== request.querySource) return false;
  if (m.model !== undefined && m.model !== request.body.model) return false;
  return true;
}

function textMatches(pattern: string, text: string | null): boolean {
  if (text === null) return false;
  return textConditionRegex(pattern)?.test(text) ?? text.includes(pattern);
}
