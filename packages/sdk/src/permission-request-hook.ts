import type { CanUseTool as LoopCanUseTool, PermissionDecision, PermissionMode } from "@forkloop/loop-core";
import { canUseToolOptions } from "./can-use-tool-options.js";
import type { HookCallbacks } from "./hook-callbacks.js";

/**
 * R-K2: PermissionRequest callbacks as the Agent SDK runs them. When a call needs an answer, the
 * program's canUseTool (or permission-prompt tool) and its PermissionRequest callbacks are asked
 * at once and the first decision wins: a callback's allow or deny settles the call while
 * canUseTool is still deciding (its signal is then aborted and its answer dropped); a callback
 * that gives no decision leaves the call to canUseTool. With callbacks and no canUseTool, a call
 * none of them decides is denied, as one nobody can answer is.
 */
export function withPermissionRequest(
  ask: LoopCanUseTool | undefined,
  callbacks: HookCallbacks,
  context: { mode: () => PermissionMode; cwd: string },
): LoopCanUseTool | undefined {
  if (!callbacks.has("PermissionRequest")) return ask;
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
      const hooked = callbacks.permissionRequest(toolName, input, {
        suggestions: suggestions ?? [],
        mode,
        toolUseId: options.toolUseId,
        agentId: options.agentId,
        signal: controller.signal,
      });
      const fromHooks = hooked.then((decision) => decision ?? asked ?? undecided(toolName));
      const decision = await (asked === undefined ? fromHooks : Promise.race([asked, fromHooks]));
      controller.abort("answered");
      return decision;
    } finally {
      options.signal.removeEventListener("abort", onAbort);
    }
  };
}

function undecided(toolName: string): PermissionDecision {
  return {
    behavior: "deny",
    message: `${toolName} needs approval and no PermissionRequest hook decided; give canUseTool, or allow it with allowedTools`,
    // Nobody answered the question (R-K2: reported as a call the user rejected, not a rule's refusal).
    decidedBy: { source: "config", unanswered: true },
  };
}
