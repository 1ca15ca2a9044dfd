/**
 * Parses the `--budget` flag (R-L14): a token budget such as `+500k`, `500000`, `1.5m`.
 * The leading `+` is Claude Code's spelling ("spend up to 500k more tokens") and is optional.
 */
export function parseTokenBudget(text: string): { ok: true; tokens: number } | { ok: false; error: string } {
  const match = /^\+?(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim());
  if (!match) {
    return { ok: false, error: `"${text}" is not a token budget; write it like +500k, 200000 or 1.5m` };
  }
  const unit = (match[2] ?? "").toLowerCase();
  const multiplier = unit === "k" ? 1_000 : unit === "m" ? 1_000_000 : 1;
  const tokens = Math.round(Number(match[1]) * multiplier);
  if (tokens < 1_000) {
    return {
      ok: false,
      error: `a budget of ${tokens} tokens is too small to finish a turn; give at least +1k`,
    };
  }
  return { ok: true, tokens };
}
