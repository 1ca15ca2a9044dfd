/**
 * Failures that say the endpoint, the key or the model is wrong — not the item (issue 13 item 3):
 * every other item would fail the same way, so a batch stops at the first one instead of paying
 * for a wave of identical failures (2 m 40 s of connection retries each, or a 401 per item).
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
   * True when fixing the environment (a key, a URL, a server) lets the same batch resume; a
   * wrong model is part of the batch's settings, so that batch is started again instead.
   */
  readonly resumable: boolean;
}

type Describe = (error: string, at: EndpointContext) => EndpointFailure;

const unreachable: Describe = (error, at) => ({
  sentence: `cannot reach the model endpoint ${at.url} (${error}). Check that the server is up and ANTHROPIC_BASE_URL is right (unset it for the Anthropic API)`,
  resumable: true,
});
const badKey: Describe = (error, at) => ({
  sentence: `${at.url} refused the API key (401: ${error}). Set ANTHROPIC_API_KEY to a valid key`,
  resumable: true,
});
const noAccess: Describe = (error, at) => ({
  sentence: `${at.url} does not let this API key use ${at.model} (403: ${error}). Use a key with access to it`,
  resumable: true,
});
const noModel: Describe = (error, at) => ({
  sentence: `model "${at.model}" was not found at ${at.url} (404: ${error}). Give a model the endpoint serves, e.g. --model claude-sonnet-4-6`,
  resumable: false,
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
};

/** What an endpoint failure means and its fix, or undefined for any other error. */
export function describeEndpointFailure(
  error: { readonly code: string; readonly message: string },
  at: EndpointContext,
): EndpointFailure | undefined {
  return ENDPOINT_FAILURES[error.code]?.(error.message, at);
}
