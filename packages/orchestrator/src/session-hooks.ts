import {
  createSystemMessage,
  createUserMessage,
  type InstructionsLoadedInput,
  type LoopHooks,
  type Message,
  type PreCompactInput,
  type PromptExpansion,
  type ResumedCache,
  type SessionStartInput,
  type SubagentStartInput,
  type SystemMessage,
  type ToolUseContext,
  takesSystemMessages,
  type UserMessage,
  type UserPromptSubmitInput,
  type UserPromptSubmitOutcome,
} from "@forkloop/loop-core";

/**
 * Runs every hook of one kind in order; a hook that throws counts as "no opinion" (the hooks.ts
 * contract), so a broken hook never stops a session.
 */
async function runAll<Input, Outcome>(
  hooks: readonly ((input: Input) => Promise<Outcome>)[] | undefined,
  input: Input,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const hook of hooks ?? []) {
    try {
      outcomes.push(await hook(input));
    } catch {
      // no opinion
    }
  }
  return outcomes;
}

/** SessionStart (startup / resume / compact): what the hooks add to the conversation. */
export async function sessionStartContext(
  hooks: LoopHooks | undefined,
  input: SessionStartInput,
): Promise<string[]> {
  const outcomes = await runAll(hooks?.sessionStart, input);
  return outcomes.flatMap((outcome) => outcome.additionalContext ?? []);
}

/** SubagentStart: what the hooks add before a sub-agent's task. */
export async function subagentStartContext(
  hooks: LoopHooks | undefined,
  input: SubagentStartInput,
): Promise<string[]> {
  const outcomes = await runAll(hooks?.subagentStart, input);
  return outcomes.flatMap((outcome) => outcome.additionalContext ?? []);
}

/** What UserPromptSubmit decided about a prompt. */
export type PromptVerdict =
  | { readonly ok: true; readonly context: readonly string[] }
  | {
      readonly ok: false;
      readonly reason: string;
      readonly event: "UserPromptSubmit" | "UserPromptExpansion";
    };

/**
 * UserPromptSubmit, then — for a prompt the host expanded (a custom command) — UserPromptExpansion,
 * as Claude Code fires them: both see the prompt as typed. A block (or `continue: false`) of
 * either drops the prompt; their context joins it, in that order.
 */
export async function submitPrompt(
  hooks: LoopHooks | undefined,
  input: UserPromptSubmitInput & { readonly expansion?: PromptExpansion | undefined },
): Promise<PromptVerdict> {
  const { expansion, ...submitted } = input;
  const prompt = expansion?.typedPrompt ?? submitted.prompt;
  const submits = await runAll(hooks?.userPromptSubmit, { ...submitted, prompt });
  const blockedSubmit = verdictOf(submits, "UserPromptSubmit");
  if (!blockedSubmit.ok || expansion === undefined) return blockedSubmit;
  const expands = await runAll(hooks?.userPromptExpansion, { expansion, context: input.context });
  const expanded = verdictOf(expands, "UserPromptExpansion");
  if (!expanded.ok) return expanded;
  return { ok: true, context: [...blockedSubmit.context, ...expanded.context] };
}

function verdictOf(
  outcomes: readonly UserPromptSubmitOutcome[],
  event: "UserPromptSubmit" | "UserPromptExpansion",
): PromptVerdict {
  const blocked = outcomes.find((outcome) => outcome.blockReason !== undefined || outcome.continue === false);
  if (blocked) {
    return {
      ok: false,
      reason: blocked.blockReason ?? blocked.stopReason ?? `a ${event} hook stopped the prompt`,
      event,
    };
  }
  return { ok: true, context: outcomes.flatMap((outcome) => outcome.additionalContext ?? []) };
}

/** InstructionsLoaded: observers only, once per memory file, in load order. */
async function announceInstructions(
  hooks: LoopHooks | undefined,
  files: readonly Omit<InstructionsLoadedInput, "context">[],
  context: ToolUseContext,
): Promise<void> {
  if (hooks?.instructionsLoaded === undefined) return;
  for (const file of files) await runAll(hooks.instructionsLoaded, { ...file, context });
}

/**
 * The main session's opening, once (before its first turn or /compact; later calls get []):
 * SessionStart — `resume` with the resumed session's prompt cache, else `startup` — then
 * InstructionsLoaded for each memory file it loaded, in load order, as Claude Code tells of them.
 */
export function sessionOpening(
  hooks: LoopHooks | undefined,
  opening: {
    readonly model: string;
    /** The context of the turn (or /compact) it opens. */
    readonly context: () => ToolUseContext;
    /** A resumed session's prompt cache, read as it opens; undefined for a new session. */
    readonly resumedCache: (() => ResumedCache | undefined) | undefined;
    readonly instructions: readonly Omit<InstructionsLoadedInput, "context">[];
  },
): () => Promise<readonly string[]> {
  let opened = false;
  return async () => {
    if (opened) return [];
    opened = true;
    const context = opening.context();
    const resumedCache = opening.resumedCache?.();
    const added = await sessionStartContext(hooks, {
      source: opening.resumedCache === undefined ? "startup" : "resume",
      model: opening.model,
      context,
      ...(resumedCache === undefined ? {} : { resumedCache }),
    });
    await announceInstructions(hooks, opening.instructions, context);
    return added;
  };
}

/** PreCompact: observers only (Claude Code gives them no control). */
async function announceCompaction(hooks: LoopHooks | undefined, input: PreCompactInput): Promise<void> {
  await runAll(hooks?.preCompact, input);
}

/**
 * A turn's opening as Claude Code 2.1.332 sends it (R-X1, claude-cli scenarios hook-session-context,
 * hook-session-context-older-model, hooks-subagent-start-context): the prompt, then SessionStart's
 * (a sub-agent's SubagentStart's) and UserPromptSubmit's texts (each in its event's words,
 * promptHookLabel) as one `role: "system"` message — where
 * `model` takes one; for a model without them, the texts go before the prompt in its user turn, a
 * `<system-reminder>` block each. After the prompt, the system prompt and tools stay one cached
 * prefix across a batch's items and forks (R-F3).
 */
export function promptWithContext(
  context: readonly string[],
  model: string,
  previous: Message | undefined,
  promptMessages: (parentUuid: string | null) => Message[],
): Message[] {
  if (context.length === 0) return promptMessages(previous?.uuid ?? null);
  if (!takesSystemMessages(model)) {
    const reminders = createUserMessage(
      context.map((text) => ({
        type: "text" as const,
        text: `<system-reminder>\n${text}\n</system-reminder>`,
      })),
      { isMeta: true, parentUuid: previous?.uuid ?? null },
    );
    return [reminders, ...promptMessages(reminders.uuid)];
  }
  const prompt = promptMessages(previous?.uuid ?? null);
  const system: SystemMessage = createSystemMessage(context.join("\n\n"), "model_context", {
    parentUuid: prompt.at(-1)?.uuid ?? previous?.uuid ?? null,
  });
  return [...prompt, system];
}

/** Hook context as a meta user message for the model, after `previous` (none when empty). */
export function hookContextMessage(context: readonly string[], previous: Message | undefined): UserMessage[] {
  if (context.length === 0) return [];
  return [createUserMessage(context.join("\n\n"), { isMeta: true, parentUuid: previous?.uuid ?? null })];
}

/**
 * The compaction pipeline's hook wiring for one agent: PreCompact before each compaction
 * (reactive counts as auto, as in Claude Code), SessionStart `compact` after it, whose context
 * the pipeline adds right after the summary, then PostCompact with the summary.
 */
export function compactionHooks(
  hooks: LoopHooks | undefined,
  context: () => ToolUseContext,
  model: () => string,
): {
  onPreCompact?: (event: {
    trigger: "manual" | "auto" | "reactive";
    instructions: string | undefined;
  }) => Promise<void>;
  onCompacted?: () => Promise<readonly string[]>;
  onPostCompact?: (event: {
    trigger: "manual" | "auto" | "reactive";
    compactSummary: string;
  }) => Promise<void>;
} {
  return {
    ...(hooks?.preCompact === undefined
      ? {}
      : {
          onPreCompact: ({ trigger, instructions }) =>
            announceCompaction(hooks, {
              trigger: trigger === "manual" ? "manual" : "auto",
              customInstructions: instructions ?? "",
              context: context(),
            }),
        }),
    ...(hooks?.postCompact === undefined
      ? {}
      : {
          onPostCompact: async ({ trigger, compactSummary }) => {
            await runAll(hooks.postCompact, {
              trigger: trigger === "manual" ? "manual" : "auto",
              compactSummary,
              context: context(),
            });
          },
        }),
    ...(hooks?.sessionStart === undefined
      ? {}
      : {
          onCompacted: () =>
            sessionStartContext(hooks, { source: "compact", model: model(), context: context() }),
        }),
  };
}
