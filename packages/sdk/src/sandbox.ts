import type { PermissionMode } from "@forkloop/loop-core";
import { permissionModeFacts, probeBubblewrap, type SandboxMode, type SandboxPolicy } from "@forkloop/tools";
import { OptionsError } from "./options-error.js";

/**
 * R-S6: the Bash sandbox for this run. The option (`--sandbox`) wins over the settings' `sandbox`; unset, it is
 * `auto` for batch jobs and dontAsk runs (they run unattended) and `off` otherwise. `on` without a
 * working bubblewrap stops the command (exit 2); `auto` says once on stderr that Bash runs
 * unsandboxed.
 */
export function resolveSandbox(
  requested: SandboxMode | undefined,
  context: {
    readonly mode: PermissionMode;
    readonly unattended: boolean;
    readonly path: string | undefined;
    readonly notice: (line: string) => void;
    /** The session's HOME: the sandbox keeps the user's own files there read-only (R-S9). */
    readonly home?: string | undefined;
    /** The session's forkloop directory: what a running command may still create is recorded there. */
    readonly userDir?: string | undefined;
  },
): SandboxPolicy {
  const mode =
    requested ?? (context.unattended || permissionModeFacts(context.mode).unattended ? "auto" : "off");
  if (mode === "off") return { enabled: false };
  const probe = probeBubblewrap(context.path ?? "");
  if (probe.ok)
    return {
      enabled: true,
      bwrap: probe.bwrap,
      ...(context.home ? { home: context.home } : {}),
      ...(context.userDir ? { userDir: context.userDir } : {}),
    };
  if (mode === "on") {
    throw new OptionsError(
      `sandbox "on" (--sandbox on): ${probe.reason}. Fix: install bubblewrap (apt-get install bubblewrap), or set sandbox to "off".`,
    );
  }
  context.notice(`forkloop: sandbox auto: ${probe.reason}; Bash runs without the sandbox.`);
  return { enabled: false };
}
