export type ExpandResult =
  | { readonly ok: true; readonly value: string }
  | { readonly ok: false; readonly variable: string };

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/**
 * Claude Code's `.mcp.json` expansion: `${VAR}` is the variable's value, `${VAR:-default}` the
 * default when VAR is unset or empty (as in a shell). A `${VAR}` that is unset is a config error
 * (the docs say so): starting a server with an empty token would fail later and less clearly.
 */
export function expandEnv(text: string, env: Readonly<Record<string, string | undefined>>): ExpandResult {
  let missing: string | undefined;
  const value = text.replace(REFERENCE, (_match, name: string, fallback: string | undefined) => {
    const current = env[name];
    if (fallback !== undefined) return current === undefined || current === "" ? fallback : current;
    if (current === undefined) missing ??= name;
    return current ?? "";
  });
  return missing === undefined ? { ok: true, value } : { ok: false, variable: missing };
}
