import { isAbsolute, join, resolve } from "node:path";
import type { PermissionMode } from "@forkloop/loop-core";
import { permissionModeFacts } from "../permissions/permission-modes.js";
import { isInside, realpathAllowingMissing } from "../workspace-paths.js";
import type { SettingsFile } from "./settings-schema.js";

const SANDBOX_STRENGTH = { off: 0, auto: 1, on: 2 } as const;

/**
 * What an untrusted project's settings file may keep (R-S5): what narrows permissions — deny and
 * ask rules, a stricter `defaultMode`, `additionalDirectories` inside the project, a stronger
 * `sandbox`, `disableBypassPermissionsMode` — and `model`. Allow rules, a wider mode, directories
 * outside the project, hooks, `env` and `apiKeyHelper` (a program run before the first request)
 * would let a checked-out repository widen what the agent may do, or run what it likes; they are
 * dropped and named in `ignored` (`permissions.allow`, `hooks` …).
 */
export function narrowUntrustedFile(
  file: SettingsFile,
  context: {
    readonly cwd: string;
    readonly home: string;
    readonly mode: PermissionMode;
    readonly sandbox: keyof typeof SANDBOX_STRENGTH;
  },
): { readonly file: SettingsFile; readonly ignored: readonly string[] } {
  const ignored: string[] = [];
  const permissions = file.permissions === undefined ? undefined : { ...file.permissions };
  if (permissions !== undefined) {
    if (permissions.allow !== undefined && permissions.allow.length > 0) {
      ignored.push(`permissions.allow (${permissions.allow.join(", ")})`);
    }
    delete permissions.allow;
    const mode = permissions.defaultMode;
    if (mode !== undefined && permissionModeFacts(mode).width > permissionModeFacts(context.mode).width) {
      ignored.push(`permissions.defaultMode "${mode}"`);
      delete permissions.defaultMode;
    }
    const directories = permissions.additionalDirectories;
    if (directories !== undefined) {
      const root = realpathAllowingMissing(resolve(context.cwd));
      const inside = directories.filter((directory) => {
        const absolute =
          directory === "~" || directory.startsWith("~/")
            ? join(context.home, directory.slice(1))
            : isAbsolute(directory)
              ? directory
              : resolve(context.cwd, directory);
        const real = realpathAllowingMissing(absolute);
        return root.ok && real.ok && isInside(real.path, root.path);
      });
      const outside = directories.filter((directory) => !inside.includes(directory));
      if (outside.length > 0)
        ignored.push(`permissions.additionalDirectories outside the project (${outside.join(", ")})`);
      permissions.additionalDirectories = inside;
    }
  }
  const { hooks, env, sandbox, apiKeyHelper, ...rest } = file;
  if (apiKeyHelper !== undefined) ignored.push("apiKeyHelper");
  if (
    hooks !== undefined &&
    Object.values(hooks).some((groups) => Array.isArray(groups) && groups.length > 0)
  )
    ignored.push("hooks");
  if (env !== undefined && Object.keys(env).length > 0) ignored.push(`env (${Object.keys(env).join(", ")})`);
  const keepSandbox = sandbox !== undefined && SANDBOX_STRENGTH[sandbox] >= SANDBOX_STRENGTH[context.sandbox];
  if (sandbox !== undefined && !keepSandbox) ignored.push(`sandbox "${sandbox}"`);
  return {
    file: {
      ...rest,
      ...(permissions === undefined ? {} : { permissions }),
      ...(keepSandbox ? { sandbox } : {}),
    },
    ignored,
  };
}
