import {
  createAgentState,
  type LoopHooks,
  type Message,
  type PostCompactInput,
  type PostToolBatchCall,
  type PostToolBatchOutcome,
  type PostToolUseOutcome,
  type PreCompactInput,
  type PreCompactOutcome,
  type PreToolUseOutcome,
  type SessionStartInput,
  type SessionStartOutcome,
  type StopFailureInput,
  type StopHookOutcome,
  type SubagentStartOutcome,
  type ToolResult,
  type ToolUseContext,
  type UserPromptSubmitOutcome,
} from "@forkloop/loop-core";
import type { SubAgentTask } from "./sub-agent-types.js";

/**
 * Loop hooks cross the thread as plain data: a hook's input carries the ToolUseContext (tools,
 * an AbortController), which cannot be structured-cloned, so only these fields travel and the
 * parent runs its hook with a context rebuilt from them.
 */
export type HookCall =
  | {
      readonly kind: "preToolUse";
      readonly index: number;
      readonly toolName: string;
      readonly toolInput: Record<string, unknown>;
      readonly toolUseId: string;
    }
  | {
      readonly kind: "postToolUse";
      readonly index: number;
      readonly toolName: string;
      readonly toolInput: Record<string, unknown>;
      readonly toolUseId: string;
      readonly result: ToolResult;
      readonly durationMs?: number;
    }
  | { readonly kind: "postToolBatch"; readonly index: number; readonly calls: readonly PostToolBatchCall[] }
  | {
      readonly kind: "stop";
      readonly index: number;
      readonly messages: readonly Message[];
      readonly stopHookActive: boolean;
    }
  | {
      readonly kind: "sessionStart";
      readonly index: number;
      readonly source: SessionStartInput["source"];
      readonly model: string;
    }
  | { readonly kind: "userPromptSubmit"; readonly index: number; readonly prompt: string }
  | {
      readonly kind: "preCompact";
      readonly index: number;
      readonly trigger: PreCompactInput["trigger"];
      readonly customInstructions: string;
    }
  | {
      readonly kind: "postCompact";
      readonly index: number;
      readonly trigger: PostCompactInput["trigger"];
      readonly compactSummary: string;
    }
  | {
      readonly kind: "stopFailure";
      readonly index: number;
      readonly apiError: StopFailureInput["apiError"];
      readonly text: string;
    }
  | {
      readonly kind: "subagentStart";
      readonly index: number;
      readonly agentType: string;
      readonly toolUseId?: string;
    };

export type HookOutcome =
  | PreToolUseOutcome
  | PostToolUseOutcome
  | PostToolBatchOutcome
  | StopHookOutcome
  | SessionStartOutcome
  | UserPromptSubmitOutcome
  | PreCompactOutcome
  | SubagentStartOutcome;

/** How many hooks of each kind the parent has (the worker builds one proxy per hook). */
export interface HookCounts {
  readonly preToolUse: number;
  readonly postToolUse: number;
  readonly postToolBatch: number;
  readonly stop: number;
  readonly sessionStart: number;
  readonly userPromptSubmit: number;
  readonly preCompact: number;
  readonly postCompact: number;
  readonly stopFailure: number;
  readonly subagentStart: number;
}

export function countHooks(hooks: LoopHooks | undefined): HookCounts {
  return {
    preToolUse: hooks?.preToolUse?.length ?? 0,
    postToolUse: hooks?.postToolUse?.length ?? 0,
    postToolBatch: hooks?.postToolBatch?.length ?? 0,
    stop: hooks?.stop?.length ?? 0,
    sessionStart: hooks?.sessionStart?.length ?? 0,
    userPromptSubmit: hooks?.userPromptSubmit?.length ?? 0,
    preCompact: hooks?.preCompact?.length ?? 0,
    postCompact: hooks?.postCompact?.length ?? 0,
    stopFailure: hooks?.stopFailure?.length ?? 0,
    subagentStart: hooks?.subagentStart?.length ?? 0,
  };
}

/** Parent side: runs one of its hooks for a call that came from a worker. */
export async function runParentHook(
  hooks: LoopHooks,
  call: HookCall,
  task: SubAgentTask,
): Promise<HookOutcome> {
  const context: ToolUseContext = {
    cwd: task.cwd,
    workspaceRoots: task.workspaceRoots,
    tools: [],
    abortController: new AbortController(),
    agentId: task.id,
    agentState: createAgentState(),
    options: { model: task.cacheSafeParams.model, permissionMode: task.profile.permissionMode },
  };
  switch (call.kind) {
    // The hook gets the input the loop gives an in-process hook, not the call's routing fields.
    case "preToolUse": {
      const { kind: _kind, index, ...input } = call;
      const hook = hooks.preToolUse?.[index];
      return hook ? hook({ ...input, context }) : {};
    }
    case "postToolUse": {
      const { kind: _kind, index, ...input } = call;
      const hook = hooks.postToolUse?.[index];
      return hook ? hook({ ...input, context }) : {};
    }
    case "postToolBatch": {
      const hook = hooks.postToolBatch?.[call.index];
      return hook ? hook({ calls: call.calls, context }) : {};
    }
    case "stop": {
      const hook = hooks.stop?.[call.index];
      return hook ? hook({ messages: call.messages, stopHookActive: call.stopHookActive, context }) : {};
    }
    case "sessionStart": {
      const hook = hooks.sessionStart?.[call.index];
      return hook ? hook({ source: call.source, model: call.model, context }) : {};
    }
    case "userPromptSubmit": {
      const hook = hooks.userPromptSubmit?.[call.index];
      return hook ? hook({ prompt: call.prompt, context }) : {};
    }
    case "preCompact": {
      const hook = hooks.preCompact?.[call.index];
      return hook
        ? hook({ trigger: call.trigger, customInstructions: call.customInstructions, context })
        : {};
    }
    case "postCompact": {
      const hook = hooks.postCompact?.[call.index];
      return hook ? hook({ trigger: call.trigger, compactSummary: call.compactSummary, context }) : {};
    }
    case "stopFailure": {
      const hook = hooks.stopFailure?.[call.index];
      return hook ? hook({ apiError: call.apiError, text: call.text, context }) : {};
    }
    case "subagentStart": {
      const { kind: _kind, index, ...input } = call;
      const hook = hooks.subagentStart?.[index];
      return hook ? hook({ ...input, context }) : {};
    }
  }
}

/** Worker side: LoopHooks whose every hook runs in the parent (over comlink). */
export function proxyHooks(counts: HookCounts, call: (call: HookCall) => Promise<HookOutcome>): LoopHooks {
  const range = (count: number) => Array.from({ length: count }, (_, index) => index);
  return {
    preToolUse: range(counts.preToolUse).map(
      (index) => (input) =>
        call({
          kind: "preToolUse",
          index,
          toolName: input.toolName,
          toolInput: input.toolInput,
          toolUseId: input.toolUseId,
        }) as Promise<PreToolUseOutcome>,
    ),
    postToolUse: range(counts.postToolUse).map(
      (index) => (input) =>
        call({
          kind: "postToolUse",
          index,
          toolName: input.toolName,
          toolInput: input.toolInput,
          toolUseId: input.toolUseId,
          result: input.result,
          ...(input.durationMs === undefined ? {} : { durationMs: input.durationMs }),
        }) as Promise<PostToolUseOutcome>,
    ),
    postToolBatch: range(counts.postToolBatch).map(
      (index) => (input) =>
        call({ kind: "postToolBatch", index, calls: input.calls }) as Promise<PostToolBatchOutcome>,
    ),
    stop: range(counts.stop).map(
      (index) => (input) =>
        call({
          kind: "stop",
          index,
          messages: input.messages,
          stopHookActive: input.stopHookActive,
        }) as Promise<StopHookOutcome>,
    ),
    sessionStart: range(counts.sessionStart).map(
      (index) => (input) =>
        call({
          kind: "sessionStart",
          index,
          source: input.source,
          model: input.model,
        }) as Promise<SessionStartOutcome>,
    ),
    userPromptSubmit: range(counts.userPromptSubmit).map(
      (index) => (input) =>
        call({ kind: "userPromptSubmit", index, prompt: input.prompt }) as Promise<UserPromptSubmitOutcome>,
    ),
    preCompact: range(counts.preCompact).map(
      (index) => (input) =>
        call({
          kind: "preCompact",
          index,
          trigger: input.trigger,
          customInstructions: input.customInstructions,
        }) as Promise<PreCompactOutcome>,
    ),
    postCompact: range(counts.postCompact).map(
      (index) => (input) =>
        call({
          kind: "postCompact",
          index,
          trigger: input.trigger,
          compactSummary: input.compactSummary,
        }) as Promise<PreCompactOutcome>,
    ),
    stopFailure: range(counts.stopFailure).map(
      (index) => (input) =>
        call({
          kind: "stopFailure",
          index,
          apiError: input.apiError,
          text: input.text,
        }) as Promise<PreCompactOutcome>,
    ),
    subagentStart: range(counts.subagentStart).map(
      (index) => (input) =>
        call({
          kind: "subagentStart",
          index,
          agentType: input.agentType,
          ...(input.toolUseId === undefined ? {} : { toolUseId: input.toolUseId }),
        }) as Promise<SubagentStartOutcome>,
    ),
  };
}
