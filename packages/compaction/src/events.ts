import type { CompactSource, CompactTrigger } from "./compact-conversation.js";

/** Progress and telemetry of the context pipeline, for UIs and logs (never control flow). */
export type CompactionEvent =
  | {
      readonly type: "tool_results_capped";
      readonly toolUseIds: readonly string[];
      readonly charsRemoved: number;
    }
  | { readonly type: "snipped"; readonly messages: number; readonly tokensFreed: number }
  | { readonly type: "microcompacted"; readonly toolUseIds: readonly string[]; readonly tokensFreed: number }
  | {
      readonly type: "collapsed";
      readonly spans: number;
      readonly tokensFreed: number;
      readonly drained: boolean;
    }
  | { readonly type: "compact_started"; readonly trigger: CompactTrigger; readonly preTokens: number }
  | {
      readonly type: "compact_succeeded";
      readonly trigger: CompactTrigger;
      readonly source: CompactSource;
      readonly preTokens: number;
      readonly postTokens: number;
      readonly rejections: readonly string[];
    }
  | {
      readonly type: "compact_failed";
      readonly trigger: CompactTrigger;
      readonly error: string;
      readonly consecutiveFailures: number;
    }
  | { readonly type: "breaker_open"; readonly consecutiveFailures: number }
  | { readonly type: "session_memory_updated"; readonly tokens: number; readonly coveredUuid: string }
  | { readonly type: "session_memory_failed"; readonly error: string };
