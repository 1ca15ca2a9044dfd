import { describeBody } from "@forkloop/loop-core";
import type { ModelSource } from "./model-endpoint.js";

/**
 * Failures that say the endpoint, the key or the model is wrong — not the item (R-R9,
 * R-R9): every other item would fail the same way, so a batch stops at the first one, whenever it
 * comes, instead of paying for a wave of identical failures (2 m 40 s of connection retries each,
 * a 401 per item once a key is revoked, a proxy's login page read as a dropped stream).
 */
export interface EndpointContext {
  /** Where requests go: ANTHROPIC_BASE_URL, the Anthropic API, or "the built-in simulator". */
  readonly url: string;
  readonly model: string;
}

export interface EndpointFailure {
  /** What is wrong and how to fix it, without the final period. */
  readonly sentence: string;
  /**
   * How the batch goes on once fixed: a plain resume after fixing the environment (a key, a URL,
   * a server), or a resume that replaces a setting (`--model NAME`, R-R7).
   */
  readonly resumeWith: string;
}

/** Where a source's requests go, as the messages name it. */
export function endpointUrl(source: ModelSource): string {
  return source.simulated
    ? "the built-in simulator"
    : (source.endpoint.baseURL ?? "https://api.anthropic.com");
}

type Describe = (error: string, at: EndpointContext) => EndpointFailure;

/** An error's text after the status the sentence names (an untyped body's message starts with it). */
const detail = (error: string) => describeBody(error.replace(/^\d{3} /, ""));

const unreachable: Describe = (error, at) => ({
  sentence: `cannot reach the model endpoint ${at.url} (${error}). Check that the server is up and ANTHROPIC_BASE_URL is right (unset it for the Anthropic API)`,
  resumeWith: "",
});
const badKey: Describe = (error, at) => ({
  sentence: `${at.url} refused the API key (401: ${detail(error)}). Set ANTHROPIC_API_KEY to a valid key`,
  resumeWith: "",
});
const noAccess: Describe = (error, at) => ({
  sentence: `${at.url} does not let this API key use ${at.model} (403: ${detail(error)}). Use a key with access to it`,
  resumeWith: "",
});
const noModel: Describe = (error, at) => ({
  sentence: `model "${at.model}" was not found at ${at.url} (404: ${detail(error)}). Give a model the endpoint serves`,
  resumeWith: " --model NAME",
});
// R-R9: an answer that is not the Messages API's (a login page, another API, a 404 from a web server).
const wrongEndpoint: Describe = (error, at) => ({
  sentence: `${at.url} is not an Anthropic Messages API endpoint: ${error}. Check ANTHROPIC_BASE_URL (the API's root, e.g. https://api.anthropic.com, without /v1; a proxy may want you to log in first), or unset it for the Anthropic API`,
  resumeWith: "",
});

/** By the error type the loop reports (`terminal.error.type`; `http_<status>` when the body had none). */
const ENDPOINT_FAILURES: Readonly<Record<string, Describe>> = {
  connection_error: unreachable,
  authentication_error: badKey,
  http_401: badKey,
  permission_error: noAccess,
  http_403: noAccess,
  not_found_error: noModel,
  http_404: noModel,
  wrong_endpoint: wrongEndpoint,
};

/** What an endpoint failure means and its fix, or undefined for any other error. */
export function describeEndpointFailure(
  error: { readonly code: string; readonly message: string },
  at: EndpointContext,
): EndpointFailure | undefined {
  return ENDPOINT_FAILURES[error.code]?.(error.message, at);
}

/**
 * R-R9: an endpoint failure of this host's own — its key, its URL — for a queue worker, which
 * stops on it; a model the endpoint does not know is the batch's, failed as any item's error.
 */
export function describeHostFailure(
  error: { readonly code: string; readonly message: string },
  at: EndpointContext,
): EndpointFailure | undefined {
  return ENDPOINT_FAILURES[error.code] === noModel ? undefined : describeEndpointFailure(error, at);
}
