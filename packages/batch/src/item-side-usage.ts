import type Anthropic from "@anthropic-ai/sdk";
import {
  costUsd,
  getModelInfo,
  type ModelInfo,
  sumUsage,
  type UsageTotals,
  usageTotalsOf,
} from "@forkloop/loop-core";

/** An item's usage and cost: what its result and its live progress carry. */
export interface ItemSpend {
  readonly usage: UsageTotals;
  readonly costUsd: number;
}

/**
 * The requests a batch item's parent-side tools send on their own (WebSearch's, R-T6), by the
 * calling item's agent id: they run in this process, not in the item's worker, so the worker's
 * totals leave them out; the pool executor adds them to the item's usage and cost.
 */
export interface ItemSideUsage {
  add(agentId: string, model: string, usage: Anthropic.Messages.Usage): void;
  /** The item's spend so far plus its side requests'. */
  with(agentId: string, spend: ItemSpend): ItemSpend;
  /** Forgets an item attempt whose result is settled. */
  drop(agentId: string): void;
}

export function itemSideUsage(modelOverrides: readonly ModelInfo[]): ItemSideUsage {
  const byAgent = new Map<string, ItemSpend>();
  return {
    add(agentId, model, usage) {
      const sofar = byAgent.get(agentId) ?? { usage: usageTotalsOf([]), costUsd: 0 };
      byAgent.set(agentId, {
        usage: sumUsage(sofar.usage, usageTotalsOf([usage])),
        // Priced at the search's own model, its searches included ($10 per 1,000).
        costUsd: sofar.costUsd + costUsd(getModelInfo(model, modelOverrides), usage),
      });
    },
    with(agentId, spend) {
      const side = byAgent.get(agentId);
      if (side === undefined) return spend;
      return { usage: sumUsage(spend.usage, side.usage), costUsd: spend.costUsd + side.costUsd };
    },
    drop(agentId) {
      byAgent.delete(agentId);
    },
  };
}
