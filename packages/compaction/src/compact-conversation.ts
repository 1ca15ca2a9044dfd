import {
  type CacheSafeParams,
  estimateMessageTokens,
  estimateTextTokens,
  type Message,
  type SystemMessage,
  tokenCountWithEstimation,
  type Usage,
} from "@forkloop/loop-core";
import {
  defaultMessageFactory,
  indexToolUses,
  isSafeCut,
  type MessageFactory,
  makeBoundary,
  makeUserMessage,
} from "./message-shape.js";
import { protectedTailStart, type ShrunkTail, shrinkProtectedTail } from "./protected-tail.js";
import { attachRecentFiles, formatAttachedFiles, recentlyTouchedFiles } from "./recent-files.js";
import type { SessionNotes } from "./session-memory.js";
import { planSnip } from "./snip.js";
import {
  buildCompactInstruction,
  buildRetryInstruction,
  buildTruncationSummary,
  extractSummary,
  findActiveTask,
  validateSummary,
} from "./summary.js";

export type CompactTrigger = "manual" | "auto" | "reactive";

export interface CompactRequest {
  /** The parent's exact request parameters; `forkContextMessages` is the history to summarise. */
  readonly cacheSafeParams: CacheSafeParams;
  /** Appended as the one new user message after the parent's prefix (R-F3). */
  readonly instruction: string;
  readonly signal: AbortSignal;
  /** `compact` (default) or `session_memory`: sent as the request's query source (R-L3). */
  readonly querySource?: "compact" | "session_memory";
}

export type CompactRunResult =
  | { readonly ok: true; readonly summary: string; readonly usage: Usage }
  | { readonly ok: false; readonly error: string };

/** Runs one compact request: the parent's exact prefix + one instruction (cache-safe, R-F3). */
export type CompactRunner = (request: CompactRequest) => Promise<CompactRunResult>;

export interface RecentFilesOptions {
  readonly maxTokens: number;
  readFile(path: string): Promise<string | null>;
}

export interface CompactConversationInput {
  readonly messages: readonly Message[];
  readonly cacheSafeParams: CacheSafeParams | undefined;
  readonly runCompact: CompactRunner;
  /** Extra instructions (a `/compact <text>` argument). */
  readonly instructions?: string;
  readonly trigger: CompactTrigger;
  readonly signal?: AbortSignal;
  /**
   * Token budget of the protected tail (default: a fifth of the current count). When even the
   * shortest valid tail is over it, the tail's tool results are cut to fit (shrinkProtectedTail).
   */
  readonly tailTokens?: number;
  /**
   * The compaction fails unless the history it returns is under this many tokens (the auto-compact
   * line for auto, the blocking limit for reactive and manual). It always fails when it would not
   * shrink the history at all (post ≥ pre).
   */
  readonly maxPostTokens?: number;
  /** Current token count (default: tokenCountWithEstimation of `messages`). */
  readonly preTokens?: number;
  /** R-C5: start from these notes instead of a model summary when they cover enough. */
  readonly sessionNotes?: SessionNotes | null;
  /** With session notes: only use them if the result is at most this many tokens. */
  readonly targetTokens?: number;
  readonly recentFiles?: RecentFilesOptions;
  readonly factory?: MessageFactory;
}

export type CompactSource = "model" | "session_memory" | "truncation";

export type CompactOutcome =
  | {
      readonly ok: true;
      readonly messages: readonly Message[];
      readonly boundary: SystemMessage;
      readonly summary: string;
      /**
       * The summary as PostCompact hooks get it (`compact_summary`): the model's reply as it came,
       * as in Claude Code, or the notes' or truncation's text (R-X1).
       */
      readonly compactSummary: string;
      readonly source: CompactSource;
      readonly preTokens: number;
      readonly postTokens: number;
      /** Reasons the model's earlier summaries were rejected, in order. */
      readonly rejections: readonly string[];
      readonly usage: readonly Usage[];
    }
  | { readonly ok: false; readonly error: string; readonly usage: readonly Usage[] };

/** Model summary attempts before the truncation fallback: the first try and one retry. */
const SUMMARY_ATTEMPTS = 2;

/**
 * Replaces everything before the protected tail by one summary message (R-C4, R-C6, manual
 * /compact). The summary comes from session notes when they cover the replaced part (R-C5), else
 * from a compact request through `runCompact` with the parent's exact prefix; a summary that is
 * not smaller than what it replaces or that dropped the active task is retried once, then
 * replaced by a truncation summary. The active task is also pinned verbatim next to the summary.
 * A runner failure is `{ ok: false }` (it counts toward the auto-compact breaker).
 */
export async function compactConversation(input: CompactConversationInput): Promise<CompactOutcome> {
  const { messages } = input;
  const factory = input.factory ?? defaultMessageFactory;
  const preTokens = input.preTokens ?? tokenCountWithEstimation(messages);
  const activeTask = findActiveTask(messages);
  const usage: Usage[] = [];

  const fromNotes = input.sessionNotes ? planFromSessionNotes(input, input.sessionNotes, activeTask) : null;
  if (fromNotes) {
    return finish(input, factory, {
      tailStart: fromNotes.tailStart,
      tail: messages.slice(fromNotes.tailStart),
      summary: input.sessionNotes!.text.trim(),
      source: "session_memory",
      activeTask,
      preTokens,
      rejections: [],
      usage,
    });
  }

  const tailTokens = input.tailTokens ?? Math.floor(preTokens / 5);
  const tailStart = wholeOrTail(input, tailTokens);
  if (tailStart <= 0)
    return { ok: false, error: "nothing to compact: no safe place to cut the history", usage };
  // The shortest valid tail can still be over budget (one huge tool result): cut its results. What
  // they lose is replaced too — the summary may cover it, the compact request sees it whole.
  const tail = shrinkProtectedTail(messages.slice(tailStart), tailTokens);
  const replacedTokens = sumTokens(messages.slice(0, tailStart)) + tail.tokensFreed;
  if (!input.cacheSafeParams) {
    return {
      ok: false,
      error: "no cache-safe parameters yet: the compact request needs the parent's prefix",
      usage,
    };
  }

  const signal = input.signal ?? new AbortController().signal;
  const rejections: string[] = [];
  let forkMessages = messages;
  let trimmed = false;
  for (let attempt = 0; attempt < SUMMARY_ATTEMPTS; attempt++) {
    const instruction =
      (attempt === 0
        ? buildCompactInstruction(input.instructions)
        : buildRetryInstruction(
            input.instructions,
            rejections.at(-1) ?? "",
            Math.floor(replacedTokens / 2),
          )) + tailCutNote(messages, tail);
    const result = await input.runCompact({
      cacheSafeParams: { ...input.cacheSafeParams, forkContextMessages: forkMessages },
      instruction,
      signal,
      querySource: "compact",
    });
    if (!result.ok) {
      // A history already over the window (reactive compact, R-C6) makes the compact request
      // itself too long: retry once without the oldest messages. That request no longer shares
      // the parent's prefix (a documented cache miss, R-F3), but it can succeed.
      const overflow = promptTooLongOverflow(result.error);
      const shorter = overflow === null || trimmed ? null : trimHeadForRetry(forkMessages, overflow);
      if (shorter === null) return { ok: false, error: result.error, usage };
      forkMessages = shorter;
      trimmed = true;
      attempt--;
      continue;
    }
    usage.push(result.usage);
    const summary = extractSummary(result.summary);
    // A manual compaction of the whole history takes the summary as the model gave it, as Claude
    // Code's does: there is no tail to weigh it against, and the task is pinned beside it.
    const verdict =
      tail.messages.length === 0 && summary.length > 0
        ? ({ ok: true } as const)
        : validateSummary(summary, { tokens: replacedTokens }, activeTask);
    if (verdict.ok) {
      return finish(input, factory, {
        tailStart,
        tail: tail.messages,
        summary,
        reply: result.summary,
        source: "model",
        activeTask,
        preTokens,
        rejections,
        usage,
      });
    }
    rejections.push(verdict.reason);
  }
  const summary = buildTruncationSummary({
    replaced: messages.slice(0, tailStart),
    activeTask,
    files: recentlyTouchedFiles(messages.slice(0, tailStart)),
    maxTokens: Math.floor(replacedTokens / 2),
  });
  return finish(input, factory, {
    tailStart,
    tail: tail.messages,
    summary,
    source: "truncation",
    activeTask,
    preTokens,
    rejections,
    usage,
  });
}

/**
 * Where the kept tail starts. A manual `/compact` of a history that fits in its tail budget, or has
 * no safe cut, summarises all of it (nothing kept verbatim), as Claude Code's does however short
 * the session — if the model said anything since the last compaction: a history that is only a
 * summary has nothing to compact. Auto and reactive compactions keep their tail or do not run
 * (R-C4, R-X1).
 */
function wholeOrTail(input: CompactConversationInput, tailTokens: number): number {
  const { messages } = input;
  const tailStart = protectedTailStart(messages, tailTokens);
  if (tailStart > 0 || input.trigger !== "manual") return tailStart;
  return messages.some((message) => message.type === "assistant") ? messages.length : 0;
}

/**
 * Tokens of the request outside `messages` (system prompt and tools), so that post-compaction
 * counts compare with the API's pre-compaction usage. Estimated from the cache-safe parameters
 * (an over-estimate, R-C8); without them, what the authoritative count has beyond the messages.
 */
function prefixOverheadTokens(input: CompactConversationInput, preTokens: number): number {
  const params = input.cacheSafeParams;
  if (params)
    return (
      estimateTextTokens(JSON.stringify(params.systemPrompt)) +
      estimateTextTokens(JSON.stringify(params.tools))
    );
  return Math.max(0, preTokens - sumTokens(input.messages));
}

/** Tokens over the window in the API's "prompt is too long: N tokens > M maximum", else null. */
function promptTooLongOverflow(error: string): number | null {
  const match = /prompt is too long: (\d+) tokens > (\d+) maximum/i.exec(error);
  if (!match) return null;
  return Math.max(1, Number(match[1]) - Number(match[2]));
}

/** Margin when trimming a too-long compact request: the instruction and estimate error. */
const PTL_RETRY_MARGIN_TOKENS = 1_000;

/** The fork context without its oldest messages, freeing `overflow` tokens; null if impossible. */
function trimHeadForRetry(messages: readonly Message[], overflow: number): readonly Message[] | null {
  let lastCut = -1;
  for (let index = messages.length - 1; index > 0; index--) {
    if (isSafeCut(messages, index)) {
      lastCut = index;
      break;
    }
  }
  if (lastCut < 0) return null;
  const mustFree = Math.ceil(overflow * 1.25) + PTL_RETRY_MARGIN_TOKENS;
  const plan = planSnip(messages, {
    tokens: mustFree,
    triggerTokens: 0,
    targetTokens: 0,
    maxMessages: Number.POSITIVE_INFINITY,
    targetMessages: 0,
    tailStart: lastCut,
  });
  if (plan === null || plan.tokensFreed < mustFree) return null;
  return [...messages.slice(0, plan.from), ...messages.slice(plan.to)];
}

function sumTokens(messages: readonly Message[]): number {
  let tokens = 0;
  for (const message of messages) tokens += estimateMessageTokens(message);
  return tokens;
}

/**
 * R-C5: notes cover the history up to `coveredUuid`; cut just after it (at a safe cut at or before
 * it) so no replaced message is missing from the notes. Null when the notes are unusable: not
 * found, not covering anything, the result would not fit `targetTokens`, or they fail validation.
 */
function planFromSessionNotes(
  input: CompactConversationInput,
  notes: SessionNotes,
  activeTask: string | null,
): { readonly tailStart: number } | null {
  const { messages } = input;
  const covered = messages.findIndex((message) => message.uuid === notes.coveredUuid);
  if (covered < 0) return null;
  let tailStart = Math.min(covered + 1, messages.length - 1);
  while (tailStart > 0 && !isSafeCut(messages, tailStart)) tailStart--;
  if (tailStart <= 0) return null;
  const replacedTokens = sumTokens(messages.slice(0, tailStart));
  if (!validateSummary(notes.text, { tokens: replacedTokens }, activeTask).ok) return null;
  const post = estimateTextTokens(notes.text) + sumTokens(messages.slice(tailStart));
  if (input.targetTokens !== undefined && post > input.targetTokens) return null;
  return { tailStart };
}

async function finish(
  input: CompactConversationInput,
  factory: MessageFactory,
  result: {
    readonly tailStart: number;
    /** The protected tail as it will be sent: messages from tailStart, possibly with cut results. */
    readonly tail: readonly Message[];
    readonly summary: string;
    /** The model's reply the summary came from (source `model`). */
    readonly reply?: string;
    readonly source: CompactSource;
    readonly activeTask: string | null;
    readonly preTokens: number;
    readonly rejections: readonly string[];
    readonly usage: readonly Usage[];
  },
): Promise<CompactOutcome> {
  const replaced = input.messages.slice(0, result.tailStart);
  const { tail } = result;
  const tailPaths = new Set(recentlyTouchedFiles(tail));
  const files = input.recentFiles
    ? await attachRecentFiles(
        recentlyTouchedFiles(replaced).filter((path) => !tailPaths.has(path)),
        input.recentFiles,
      )
    : [];
  const overhead = prefixOverheadTokens(input, result.preTokens);
  const cut = tail.some((message, index) => message !== input.messages[result.tailStart + index]);
  const header = { trigger: input.trigger, replacedCount: replaced.length, cut, whole: tail.length === 0 };
  let summaryMessage = makeUserMessage(factory, summaryText(header, result, files), null);
  let postTokens = overhead + sumTokens([summaryMessage, ...tail]);
  if (files.length > 0 && !fitsLimits(input, result.preTokens, postTokens)) {
    // Re-attached files are a convenience: drop them before giving up on the line.
    summaryMessage = makeUserMessage(factory, summaryText(header, result, []), null);
    postTokens = overhead + sumTokens([summaryMessage, ...tail]);
  }
  // A "success" that leaves the history at or over its line would fire again next turn (or grow
  // the context, as a tail holding one huge result once did): it is a failure, and counts toward
  // the auto-compact breaker (R-C4, R-L11). postTokens is the count of what is sent next.
  if (postTokens >= result.preTokens) {
    return {
      ok: false,
      error: `compaction would not shrink the context (${result.preTokens} → ${postTokens} tokens)`,
      usage: result.usage,
    };
  }
  if (input.maxPostTokens !== undefined && postTokens >= input.maxPostTokens) {
    return {
      ok: false,
      error: `compaction left ${postTokens} tokens, not under the limit of ${input.maxPostTokens}`,
      usage: result.usage,
    };
  }
  const boundary = makeBoundary(
    factory,
    "compact_boundary",
    `Conversation compacted (${input.trigger}, ${result.source}): ${result.preTokens} → ${postTokens} tokens`,
    null,
    {
      trigger: input.trigger,
      preTokens: result.preTokens,
      postTokens,
      cumulativeDroppedTokens: droppedBefore(input.messages) + (result.preTokens - postTokens),
    },
  );
  return {
    ok: true,
    messages: [boundary, { ...summaryMessage, parentUuid: boundary.uuid }, ...tail],
    boundary,
    summary: result.summary,
    compactSummary: result.reply ?? result.summary,
    source: result.source,
    preTokens: result.preTokens,
    postTokens,
    rejections: result.rejections,
    usage: result.usage,
  };
}

/** What earlier compactions removed: the running total on the history's latest compact boundary. */
function droppedBefore(messages: readonly Message[]): number {
  const earlier = messages.findLast(
    (message) => message.type === "system" && message.subtype === "compact_boundary",
  );
  const metadata = earlier?.type === "system" ? earlier.compactMetadata : undefined;
  if (metadata === undefined) return 0;
  // A boundary written before the total was kept counts its own drop.
  return metadata.cumulativeDroppedTokens ?? Math.max(0, metadata.preTokens - metadata.postTokens);
}

function fitsLimits(input: CompactConversationInput, preTokens: number, postTokens: number): boolean {
  return postTokens < preTokens && (input.maxPostTokens === undefined || postTokens < input.maxPostTokens);
}

/** Told to the summarizer when the kept tail's results will be cut: their content is its to keep. */
function tailCutNote(messages: readonly Message[], tail: ShrunkTail): string {
  const ids = new Set([...tail.cappedToolUseIds, ...tail.clearedToolUseIds]);
  if (ids.size === 0) return "";
  const names = [...indexToolUses(messages).values()].filter((use) => ids.has(use.id)).map((use) => use.name);
  return `\n\nThe newest tool results (${names.join(", ")}) are too large to keep and will be cut after this summary: record what matters from them under "Current state".`;
}

function summaryText(
  header: {
    readonly trigger: CompactTrigger;
    readonly replacedCount: number;
    readonly cut: boolean;
    /** Nothing is kept verbatim: the summary replaces the whole history. */
    readonly whole: boolean;
  },
  result: { readonly summary: string; readonly activeTask: string | null },
  files: Awaited<ReturnType<typeof attachRecentFiles>>,
): string {
  const follow = header.whole
    ? ""
    : header.cut
      ? "; the newest messages follow it, their largest tool results cut to fit"
      : "; the newest messages follow it verbatim";
  return [
    `This session continues an earlier conversation that was compacted (${header.trigger}) to fit the context window. The summary below replaces ${header.replacedCount} earlier messages${follow}.`,
    `<summary>\n${result.summary}\n</summary>`,
    result.activeTask === null
      ? ""
      : `The task in progress (verbatim):\n<active-task>\n${result.activeTask}\n</active-task>`,
    files.length === 0
      ? ""
      : `Files touched before the compaction, re-read from disk:\n${formatAttachedFiles(files)}`,
  ]
    .filter((part) => part.length > 0)
    .join("\n\n");
}
