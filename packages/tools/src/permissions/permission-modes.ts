import type { PermissionMode } from "@forkloop/loop-core";

/**
 * The permission modes (R-P1), in the order messages list them. The order is also each mode's
 * index in a session's shared mode cell (R-S14): append, never reorder.
 */
export const PERMISSION_MODES = [
  "default",
  "acceptEdits",
  "plan",
  "bypassPermissions",
  "dontAsk",
  "auto",
] as const satisfies readonly PermissionMode[];

/** Everything forkloop knows about one permission mode; every decision that depends on a mode reads it here. */
export interface PermissionModeFacts {
  /** The system prompt's line about the mode (the model is told what it may do). */
  readonly summary: string;
  /** Only read-only calls run; anything that changes something is denied (plan). */
  readonly readOnly: boolean;
  /** Every call runs unasked; deny and ask rules still hold (bypassPermissions). */
  readonly approvesEverything: boolean;
  /** File edits inside the workspace run unasked (acceptEdits). */
  readonly approvesEdits: boolean;
  /** What would ask is denied instead: nobody is there to answer (dontAsk). */
  readonly deniesAsks: boolean;
  /** Meant to run unattended: the Bash sandbox defaults to `auto` (R-S6). */
  readonly unattended: boolean;
  /** Least (0) to most permissive: an untrusted project's settings may move the mode down only (R-S5). */
  readonly width: number;
  /** Needs the explicit second switch (`allowDangerouslySkipPermissions`), and settings may disable it (R-P1). */
  readonly dangerous: boolean;
}

const NEITHER = {
  readOnly: false,
  approvesEverything: false,
  approvesEdits: false,
  deniesAsks: false,
  unattended: false,
  dangerous: false,
} as const;

/** The one table of what each mode means. `auto` decides as `default` does (no classifier model). */
const PERMISSION_MODE_FACTS: Readonly<Record<PermissionMode, PermissionModeFacts>> = {
  default: {
    ...NEITHER,
    summary: "Permission mode: default. Reading is allowed; writes and commands may ask the user first.",
    width: 2,
  },
  acceptEdits: {
    ...NEITHER,
    summary:
      "Permission mode: acceptEdits. File edits inside the workspace are allowed; commands may ask first.",
    approvesEdits: true,
    width: 3,
  },
  plan: {
    ...NEITHER,
    summary:
      "Permission mode: plan. You are read-only: every tool that changes something is denied. Investigate and propose a plan.",
    readOnly: true,
    width: 0,
  },
  bypassPermissions: {
    ...NEITHER,
    summary: "Permission mode: bypassPermissions. Tool calls are not confirmed; deny rules still apply.",
    approvesEverything: true,
    dangerous: true,
    width: 4,
  },
  dontAsk: {
    ...NEITHER,
    summary: "Permission mode: dontAsk. Anything that would need confirmation is denied.",
    deniesAsks: true,
    unattended: true,
    width: 1,
  },
  auto: {
    ...NEITHER,
    summary: "Permission mode: auto. Read-only calls are approved automatically; others may ask.",
    width: 2,
  },
};

/** The facts of `mode`. */
export function permissionModeFacts(mode: PermissionMode): PermissionModeFacts {
  return PERMISSION_MODE_FACTS[mode];
}

/** True for one of PERMISSION_MODES (a mode from options or flags is checked with this). */
export function isPermissionMode(value: string): value is PermissionMode {
  return (PERMISSION_MODES as readonly string[]).includes(value);
}
