/**
 * Config every git that Bash starts is given on its command-line scope (`GIT_CONFIG_COUNT`,
 * `GIT_CONFIG_KEY_n`, `GIT_CONFIG_VALUE_n`: git reads them as if passed with `-c`, above the
 * repository's own `.git/config`), so a hostile repository cannot make `git status` start a
 * program — also when git runs inside an allowed `npm test` (R-S2):
 * - `core.fsmonitor=false`: the fsmonitor hook runs on every index refresh;
 * - `core.pager=cat`: no pager program (Bash has no terminal, but `-p` and `pager.*` exist);
 * - `protocol.ext.allow=never`: an `ext::` remote URL runs a shell command on fetch/push.
 * What config cannot switch off by name — `diff.external` (an empty value makes git run ""),
 * textconv and filter drivers (any driver name), `core.hooksPath` — is why the permission checker
 * also reads the repository's config before approving git (git-config-check.ts).
 */
const SAFE_GIT_CONFIG: readonly (readonly [key: string, value: string])[] = [
  ["core.fsmonitor", "false"],
  ["core.pager", "cat"],
  ["protocol.ext.allow", "never"],
];

/**
 * The variables that add SAFE_GIT_CONFIG after whatever command-scope config `env` already
 * carries (a CI's `safe.directory`, say), plus `GIT_OPTIONAL_LOCKS=0`: read-only git commands do
 * not rewrite the index on the side, which would run index hooks.
 */
export function gitSafeEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const given = Number(env.GIT_CONFIG_COUNT ?? "0");
  const start = Number.isInteger(given) && given > 0 ? given : 0;
  const variables: Record<string, string> = { GIT_OPTIONAL_LOCKS: "0" };
  SAFE_GIT_CONFIG.forEach(([key, value], index) => {
    variables[`GIT_CONFIG_KEY_${start + index}`] = key;
    variables[`GIT_CONFIG_VALUE_${start + index}`] = value;
  });
  variables.GIT_CONFIG_COUNT = String(start + SAFE_GIT_CONFIG.length);
  return variables;
}
