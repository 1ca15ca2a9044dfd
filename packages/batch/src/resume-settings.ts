import type { BatchSpec } from "./batch-store.js";

/** The start settings batch.json keeps (`startFlags`): each flag of `forkloop batch` as given. */
export type StartSettings = NonNullable<BatchSpec["startFlags"]>;

/**
 * Stored start settings that widen what items may do. R-S11: batch.json in the checkout can be
 * rewritten (a `git pull`), so there they are used only when the resume gives them again.
 */
const LOOSENING: Readonly<Record<string, (value: StartSettings[string]) => boolean>> = {
  sandbox: (value) => value === "off",
  "trust-project": (value) => value === true,
  "permission-mode": (value) => value === "bypassPermissions",
};

/**
 * R-R7, R-S11: the stored start settings a resume runs with. A batch whose state is in the
 * checkout keeps none that loosen (`unused`, as flags to say once) unless the resume gives it again.
 */
export function resumableStartSettings(
  stored: StartSettings,
  given: StartSettings,
  inCheckout: boolean,
): { kept: StartSettings; unused: readonly string[] } {
  if (!inCheckout) return { kept: stored, unused: [] };
  const unused = Object.entries(stored)
    .filter(([flag, value]) => !(flag in given) && LOOSENING[flag]?.(value) === true)
    .map(([flag]) => flag);
  const kept = Object.fromEntries(Object.entries(stored).filter(([flag]) => !unused.includes(flag)));
  return {
    kept,
    unused: unused.map((flag) => `--${flag}${stored[flag] === true ? "" : ` ${String(stored[flag])}`}`),
  };
}

/**
 * R-R7: the settings a resume replaces, as it says them once: `--concurrency 16 (was 8)`.
 * `before` undefined: a batch from before startFlags, whose earlier values are not known.
 */
export function changedSettings(before: StartSettings | undefined, settings: StartSettings): string[] {
  return Object.entries(settings)
    .filter(([flag, value]) => JSON.stringify(before?.[flag]) !== JSON.stringify(value))
    .map(([flag, value]) => {
      const was = before === undefined ? "" : ` (was ${valueText(before[flag])})`;
      return `${value === true ? `--${flag}` : `--${flag} ${valueText(value)}`}${was}`;
    });
}

/** A flag's value as typed (`16`, `a b` for a list), or what it was when not a value. */
function valueText(value: StartSettings[string] | undefined): string {
  if (value === undefined) return "not given";
  if (value === true) return "given";
  return Array.isArray(value) ? value.join(" ") : String(value);
}
