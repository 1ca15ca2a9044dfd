import type { ClientOptions } from "@anthropic-ai/sdk";
import type { ModelEndpoint } from "./sub-agent-types.js";

/**
 * R-X2: the API client's credentials as Claude Code sends them. An API key goes in `x-api-key`
 * (the header gateways and proxies read to route and meter a key); `@anthropic-ai/sdk` would
 * send it as `Authorization: Bearer`, so the header is set here and the bearer one removed. A
 * bearer token (`ANTHROPIC_AUTH_TOKEN`, a gateway's) goes as `Authorization: Bearer`. Every
 * client of a run — the main loop's, each worker's — is built from this, so all send the same.
 */
export function modelClientOptions(endpoint: ModelEndpoint): ClientOptions {
  const auth: ClientOptions =
    endpoint.auth === "bearer"
      ? { authToken: endpoint.apiKey }
      : { apiKey: endpoint.apiKey, defaultHeaders: { "X-Api-Key": endpoint.apiKey, Authorization: null } };
  return { ...auth, ...(endpoint.baseURL === undefined ? {} : { baseURL: endpoint.baseURL }) };
}
