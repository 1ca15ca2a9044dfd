import { randomUUID } from "node:crypto";
import type {
  ApiMessage,
  AssistantMessage,
  ContentBlock,
  ContentBlockParam,
  SystemMessage,
  ToolResultMeta,
  UserMessage,
} from "./messages.js";
import { isWrongEndpointMessage } from "./model-failure.js";

export interface CreateMessageOptions {
  readonly uuid?: string;
  readonly parentUuid?: string | null;
  readonly isMeta?: boolean;
  readonly interrupt?: { readonly toolUse: boolean };
  readonly toolUseResult?: unknown;
  readonly toolResultMeta?: ToolResultMeta;
}

export function createUserMessage(
  content: string | readonly ContentBlockParam[],
  options: CreateMessageOptions = {},
): UserMessage {
  return {
    type: "user",
    uuid: options.uuid ?? randomUUID(),
    parentUuid: options.parentUuid ?? null,
    timestamp: new Date().toISOString(),
    message: { role: "user", content },
    ...(options.isMeta === undefined ? {} : { isMeta: options.isMeta }),
    ...(options.interrupt === undefined ? {} : { interrupt: options.interrupt }),
    ...(options.toolUseResult === undefined ? {} : { toolUseResult: options.toolUseResult }),
    ...(options.toolResultMeta === undefined ? {} : { toolResultMeta: options.toolResultMeta }),
  };
}

export function createAssistantMessage(
  message: ApiMessage,
  options: { readonly uuid?: string; readonly parentUuid?: string | null; readonly requestId?: string } = {},
): AssistantMessage {
  return {
    type: "assistant",
    uuid: options.uuid ?? randomUUID(),
    parentUuid: options.parentUuid ?? null,
    timestamp: new Date().toISOString(),
    message,
    ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
  };
}

/**
 * An assistant message standing for an API error (R-L9). It is never sent back to the API
 * (`toApiMessages` drops it); the loop recognises it by `apiError`.
 */
export function createApiErrorMessage(
  error: { readonly status: number | null; readonly type: string; readonly message: string },
  model: string,
  options: {
    readonly uuid?: string;
    readonly parentUuid?: string | null;
    readonly requestId?: string;
    /** The endpoint the request went to (a server error's text names it). */
    readonly baseURL?: string;
  } = {},
): AssistantMessage {
  const text = apiErrorText(error, model, options.baseURL);
  const content: ContentBlock[] = [{ type: "text", text, citations: null }];
  return {
    ...createAssistantMessage(syntheticApiMessage(model, content, null), options),
    apiError: { status: error.status, type: error.type, message: error.message },
  };
}

/** Claude Code 2.1.332's words for a 413 (claude-cli scenario api-error-too-large). */
const REQUEST_TOO_LARGE_TEXT =
  "Request too large (max 32MB). Accumulated images and attachments in the conversation pushed the request over the limit. Remove older images or compact the conversation.";

/**
 * An API error in Claude Code's words (R-K2): `API Error: ` and, when a response came, its HTTP
 * status before the API's message (`API Error: 400 Invalid request`); the API's 404 is Claude
 * Code's sentence naming the requested model (its own words, not the API's). A 404 from a server
 * that is not the Messages API keeps forkloop's wrong-endpoint words (R-R9 reads them). As Claude
 * Code 2.1.332 says them (claude-cli scenarios api-error-billing, api-error-forbidden): a 402 whose
 * message says the credit balance is too low is just that, a 403 is a failed authentication, a 413
 * says what fills a request (api-error-too-large), a server error (5xx) says it is the server's and
 * where to look if it persists: the API's status page, or the endpoint a base URL names
 * (api-error-server), a 429 is a rejected request (api-error-rate-limit).
 */
export function apiErrorText(
  error: { readonly status: number | null; readonly message: string },
  model?: string,
  baseURL?: string,
): string {
  if (error.status === 404 && model !== undefined && !isWrongEndpointMessage(error.message)) {
    return `There's an issue with the selected model (${model}). It may not exist or you may not have access to it. Run --model to pick a different model.`;
  }
  if (error.status === 402 && /credit balance is too low/i.test(error.message))
    return "Credit balance is too low";
  if (error.status === 413) return REQUEST_TOO_LARGE_TEXT;
  const status =
    error.status === null || error.message.startsWith(`${error.status} `) ? "" : `${error.status} `;
  const text = `API Error: ${status}${error.message}`;
  if (error.status === 429) {
    const said = error.message.replace(/^429(\s+|$)/, "");
    return `API Error: Request rejected (429) · ${said || `this may be a temporary capacity issue.${persistsHint(baseURL)}`}`;
  }
  if (error.status !== null && error.status >= 500)
    return `${text.trimEnd().replace(/[.!?…]+$/, "")}. This is a server-side issue, usually temporary — try again in a moment.${persistsHint(baseURL)}`;
  return error.status === 403 ? `Failed to authenticate. ${text}` : text;
}

/** Where Claude Code 2.1.332 says to look when a server error persists. */
function persistsHint(baseURL: string | undefined): string {
  const host = hostOf(baseURL);
  return host === undefined || host === "api.anthropic.com"
    ? " If it persists, check https://status.claude.com."
    : ` If it persists, check your inference gateway (${host}).`;
}

function hostOf(baseURL: string | undefined): string | undefined {
  if (baseURL === undefined || baseURL === "") return undefined;
  try {
    return new URL(baseURL).host;
  } catch {
    return baseURL;
  }
}

/** A response-shaped message that no API call produced (errors, synthetic notices). */
export function syntheticApiMessage(
  model: string,
  content: ContentBlock[],
  stopReason: ApiMessage["stop_reason"],
): ApiMessage {
  return {
    id: `msg_synthetic_${randomUUID()}`,
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: emptyUsage(),
  } as unknown as ApiMessage;
}

function emptyUsage(): ApiMessage["usage"] {
  return {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  } as ApiMessage["usage"];
}

export function createSystemMessage(
  content: string,
  subtype: SystemMessage["subtype"] = "informational",
  options: { readonly uuid?: string; readonly parentUuid?: string | null } = {},
): SystemMessage {
  return {
    type: "system",
    subtype,
    content,
    uuid: options.uuid ?? randomUUID(),
    parentUuid: options.parentUuid ?? null,
    timestamp: new Date().toISOString(),
  };
}

/** Text of the user message that marks an interruption (R-L16). */
export const INTERRUPT_MESSAGE = "[Request interrupted by user]";
export const INTERRUPT_MESSAGE_FOR_TOOL_USE = "[Request interrupted by user for tool use]";
