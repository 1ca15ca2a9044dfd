import type { ModelRegistry, ModelSpec } from "./model-registry.js";

/**
 * The Models API's `ModelInfo` (R-D4): the models overview says the response carries
 * `max_input_tokens`, `max_tokens` and a `capabilities` object for every model
 * (https://platform.claude.com/docs/en/models/overview#use-the-models-api); the field shapes are
 * SDK 1.14's `ModelInfo`. Retired models stay listed with `lifecycle: "retired"` (the SDK's docs:
 * "It remains in the catalogue as the historical record of its retirement").
 */
export function modelInfo(spec: ModelSpec): object {
  const row = spec.row;
  const supported = (yes: boolean) => ({ supported: yes });
  const effort = spec.effort ?? ["low", "medium", "high", "xhigh", "max"];
  const anyThinking = spec.thinking.enabled || spec.thinking.adaptive;
  return {
    type: "model",
    id: spec.id,
    display_name: row?.displayName ?? spec.id,
    created_at: `${row?.releasedAt ?? "2025-01-01"}T00:00:00Z`,
    lifecycle: row === undefined ? "active" : row.lifecycle === "legacy" ? "active" : row.lifecycle,
    deprecated_at: row?.deprecatedAt ? `${row.deprecatedAt}T00:00:00Z` : null,
    retires_at: row?.retiresAt ? `${row.retiresAt}T00:00:00Z` : null,
    line: row?.line ?? null,
    max_input_tokens: spec.contextWindow,
    max_tokens: spec.maxOutputTokens,
    capabilities: {
      batch: supported(true),
      citations: supported(true),
      code_execution: supported(true),
      context_management: {
        supported: true,
        clear_thinking_20251015: supported(anyThinking),
        clear_tool_uses_20250919: supported(true),
        compact_20260112: supported(spec.keepsPriorThinking !== false),
      },
      effort: {
        supported: effort.length > 0,
        low: supported(effort.includes("low")),
        medium: supported(effort.includes("medium")),
        high: supported(effort.includes("high")),
        xhigh: supported(effort.includes("xhigh")),
        max: supported(effort.includes("max")),
      },
      image_input: supported(true),
      pdf_input: supported(true),
      server_tools: { supported: true, web_search: supported(true), code_execution: supported(true) },
      structured_outputs: supported(true),
      thinking: {
        supported: anyThinking,
        types: {
          enabled: supported(spec.thinking.enabled),
          adaptive: supported(spec.thinking.adaptive),
          disabled: supported(spec.thinking.disabled),
          between_tools: supported(spec.thinking.disabled),
        },
      },
    },
  };
}

/** Every model once, most recently released first (the SDK's `models.list` docs). */
export function listModelInfos(registry: ModelRegistry): (object & { id: string })[] {
  const released = (spec: ModelSpec) => spec.row?.releasedAt ?? "9999";
  return registry
    .list()
    .sort((a, b) => released(b).localeCompare(released(a)))
    .map((spec) => ({ ...modelInfo(spec), id: spec.id }));
}
