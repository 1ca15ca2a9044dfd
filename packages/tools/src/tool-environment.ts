/**
 * Variables that carry the model's credentials: a prompt-injected model would otherwise print
 * them with `echo $ANTHROPIC_API_KEY` from Bash, or a hook would hand them on (R-S4).
 */
const CREDENTIAL_NAMES = new Set(["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"]);
/** forkloop's own endpoint settings that hold a secret (`FORKLOOP_API_KEY`, `FORKLOOP_…_TOKEN`). */
const FORKLOOP_SECRET = /^FORKLOOP_\w*(KEY|TOKEN|SECRET|PASSWORD)$/;

function isModelCredential(name: string): boolean {
  return CREDENTIAL_NAMES.has(name) || FORKLOOP_SECRET.test(name);
}

/**
 * The environment of Bash and hook processes: forkloop's own, without the model credentials,
 * then what the user passed explicitly (a settings `env` entry — which may put a credential back
 * on purpose), then `extra` (set by forkloop for the tool).
 */
export function toolEnvironment(
  base: NodeJS.ProcessEnv,
  explicit: Readonly<Record<string, string>> = {},
  extra: Readonly<Record<string, string>> = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) if (!isModelCredential(name)) env[name] = value;
  return { ...env, ...explicit, ...extra };
}
