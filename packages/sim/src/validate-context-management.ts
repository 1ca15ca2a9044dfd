import { type ApiError, invalidRequest } from "./api-error.js";
import { type AppliedEdit, CONTEXT_MANAGEMENT_BETA } from "./context-edits-schema.js";
import type { CountTokensRequest } from "./request-schema.js";

/** What the context edits did to a request (reported on the response, api doc §9). */
export interface ContextEditing {
  appliedEdits: AppliedEdit[];
  /** The prompt's input tokens before the edits (count_tokens reports it). */
  originalInputTokens: number;
}

/**
 * `context_management` is a beta-only field (api doc §1 "beta only"): without the
 * `context-management-2025-06-27` beta it is rejected as an extra input, in the API's words
 * (`context_management: Extra inputs are not permitted`, the body anthropics/claude-code#14135 quotes).
 * `clear_thinking_20251015` must come first when edits are combined (the API's context-editing
 * docs; wording of this error UNCONFIRMED).
 */
export function checkContextManagement(body: CountTokensRequest, betas: readonly string[]): ApiError | null {
  const config = body.context_management;
  if (config === undefined || config === null) return null;
  if (!betas.includes(CONTEXT_MANAGEMENT_BETA)) {
    return invalidRequest("context_management: Extra inputs are not permitted");
  }
  const edits = config.edits ?? [];
  const late = edits.findIndex((edit, i) => i > 0 && edit.type === "clear_thinking_20251015");
  if (late > 0) {
    return invalidRequest(
      `context_management.edits.${late}: clear_thinking_20251015 must be the first edit in context_management.edits`,
    );
  }
  return null;
}
