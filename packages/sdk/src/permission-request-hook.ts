import type { CanUseTool as LoopCanUseTool, PermissionDecision, PermissionMode } from "@forkloop/loop-core";
import { type SessionEventHooks, unapprovedCallMessage } from "@forkloop/tools";
import { canUseToolOptions } from "./can-use-tool-options.js";
import { type HookCallbacks, hookPermissionDecision } from "./hook-callbacks.js";

/**
 * R-K2: PermissionRequest hooks as the Agent SDK and Claude Code run them. When a call needs an
 * answer, the program's canUseTool (or permission-prompt tool) and the PermissionRequest hooks
 * (the program's callbacks and the settings' commands) are asked at once and the first decision
 * wins: a hook's allow or deny settles the call while canUseTool is still deciding (its signal is
 * then aborted and its answer dropped); hooks that give no decision leave the call to canUseTool.
 * With hooks and nobody to ask (no canUseTool: `-p` in default mode, R-X1), they still fire and
 * may allow or deny; a call none of them decides is denied, as one nobody can answer is.
 */
export function withPermissionRequest(
  ask: LoopCanUseTool | undefined,
  hooks: { callbacks: HookCallbacks; settings: SessionEventHooks["permissionRequest"] },
  context: { mode: () => PermissionMode; cwd: string },
): LoopCanUseTool | undefined {
  const { callbacks, settings } = hooks;
  if (!callbacks.has("PermissionRequest") && settings === undefined) return ask;
  return async (toolName, input, options) => {
    const controller = new AbortController();
    const onAbort = () => controller.abort(options.signal.reason);
    options.signal.addEventListener("abort", onAbort, { once: true });
    try {
      const mode = context.mode();
      const { suggestions } = canUseToolOptions(toolName, input, { ...options, mode, cwd: context.cwd });
      // canUseTool is asked first, the callbacks beside it (the Agent SDK's order of the two calls).
      const asked = ask?.(toolName, input, { ...options, signal: controller.signal });
      asked?.catch(() => undefined);
      const request = {
        suggestions: suggestions ?? [],
        mode,
        toolUseId: options.toolUseId,
        agentId: options.agentId,
        signal: controller.signal,
      };
      const hooked = Promise.all([
        callbacks.permissionRequest(toolName, input, request),
        settings?.({ toolName, toolInput: input, ...request }).then((decision) =>
          decision === undefined ? undefined : hookPermissionDecision(toolName, decision),
        ),
      ]).then((decisions) => decisions.find((one) => one?.behavior === "deny") ?? decisions.find(Boolean));
      const fromHooks = hooked.then(
        (decision) => decision ?? asked ?? undecided(toolName, input, context.cwd),
      );
      const decision = await (asked === undefined ? fromHooks : Promise.race([asked, fromHooks]));
      controller.abort("answered");
      return decision;
    } finally {
      options.signal.removeEventListener("abort", onAbort);
    }
  };
}

function undecided(toolName: string, input: Record<string, unknown>, cwd: string): PermissionDecision {
  return {
    behavior: "deny",
    // Nobody could approve it: Claude Code's words, as when no hook is there (R-X1).
    message:
      unapprovedCallMessage(toolName, input, cwd) ??
      `${toolName} needs approval and no PermissionRequest hook decided; give canUseTool, or allow it with allowedTools`,
    // Nobody answered the question (R-K2: reported as a call the user rejected, not a rule's refusal).
    decidedBy: { source: "config", unanswered: true },
  };
}
