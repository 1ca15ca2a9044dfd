import { OptionsError } from "./options-error.js";

/**
 * The Agent SDK's settings helpers (`@alpha` there). `resolveSettings` reports Claude Code's
 * settings cascade (managed policy tiers, MDM, per-key provenance), which forkloop does not
 * have: it is refused, naming what to use. The other two are pure and work on their inputs.
 */
export type ResolvedSettingSource = "user" | "project" | "local" | "managed" | "flag";

export interface ProvenanceEntry {
  source: ResolvedSettingSource;
  path?: string;
  policyOrigin?: "helper" | "remote" | "plist" | "hklm" | "file" | "parent" | "hkcu";
}

export interface ResolvedSettings {
  effective: Record<string, unknown>;
  provenance: Partial<Record<string, ProvenanceEntry>>;
  sources: { source: ResolvedSettingSource; settings: Record<string, unknown>; path?: string }[];
}

export interface ResolveSettingsOptions {
  cwd?: string;
  settingSources?: ("user" | "project" | "local")[];
}

export async function resolveSettings(_options: ResolveSettingsOptions = {}): Promise<ResolvedSettings> {
  throw new OptionsError(
    "resolveSettings() is not supported: forkloop has no managed settings tiers to report. Read the settings a query would use with (await resolveRunEnvironment({ cwd, env: process.env, settingSources, warn })).settings from @forkloop/sdk.",
  );
}

/** Modes that widen what runs unasked: a checked-in project file may not start a session in them. */
const ESCALATING_MODES = new Set(["bypassPermissions", "auto", "acceptEdits"]);

/**
 * The effective settings without an escalating `permissions.defaultMode` that came from the
 * project's checked-in file — the trust rule Claude Code applies (forkloop's own, for an
 * untrusted project, narrows more: R-S5).
 */
export function filterEscalatingDefaultMode(resolved: ResolvedSettings): Record<string, unknown> {
  const permissions = resolved.effective.permissions as Record<string, unknown> | undefined;
  const mode = permissions?.defaultMode;
  if (typeof mode !== "string" || !ESCALATING_MODES.has(mode)) return resolved.effective;
  const setBy = [...resolved.sources]
    .reverse()
    .find(
      (source) => (source.settings.permissions as Record<string, unknown> | undefined)?.defaultMode === mode,
    );
  if (setBy?.source !== "project") return resolved.effective;
  const { defaultMode: _dropped, ...rest } = permissions ?? {};
  return { ...resolved.effective, permissions: rest };
}

export interface DeniedModelsMatch {
  denied: boolean[];
  warnings: string[];
}

/**
 * Which of `models` a `deniedModels` list names (model ids compared whole, case-insensitively;
 * an entry ending in `*` names every id it begins). Nothing throws: entries and models that are
 * not strings are left out, with a warning each.
 */
export async function matchDeniedModels(
  models: readonly string[],
  deniedModels: readonly string[] | undefined,
): Promise<DeniedModelsMatch> {
  const warnings: string[] = [];
  if (!Array.isArray(models)) return { denied: [], warnings: ["models is not a list"] };
  const entries = (Array.isArray(deniedModels) ? deniedModels : []).flatMap((entry: unknown) => {
    if (typeof entry === "string" && entry.trim() !== "") return [entry.trim().toLowerCase()];
    warnings.push(`deniedModels entry ${JSON.stringify(entry)} is not a model name; ignored`);
    return [];
  });
  const denied = models.map((model: unknown) => {
    if (typeof model !== "string") {
      warnings.push(`${JSON.stringify(model)} is not a model name`);
      return false;
    }
    const id = model.toLowerCase();
    return entries.some((entry) => (entry.endsWith("*") ? id.startsWith(entry.slice(0, -1)) : id === entry));
  });
  return { denied, warnings };
}
