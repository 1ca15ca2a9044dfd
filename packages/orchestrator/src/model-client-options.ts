import type { ClientOptions, Middleware } from "@anthropic-ai/sdk";
import { refreshOn401 } from "./api-key-helper.js";
import type { ModelEndpoint } from "./sub-agent-types.js";

/**
 * R-X2: the API client's credentials as Claude Code sends them. An API key goes in `x-api-key`
 * (the header gateways and proxies read to route and meter a key); `@anthropic-ai/sdk` would
 * send it as `Authorization: Bearer`, so the header is set here and the bearer one removed. A
 * bearer token (`ANTHROPIC_AUTH_TOKEN`, a gateway's) goes as `Authorization: Bearer`. Every
 * client of a run — the main loop's, each worker's — is built from this, so all send the same.
 * R-X3: the endpoint's `betas` join every request's `anthropic-beta`.
 */
export function modelClientOptions(endpoint: ModelEndpoint): ClientOptions {
  const auth: ClientOptions =
    endpoint.auth === "bearer"
      ? { authToken: endpoint.apiKey }
      : {
          apiKey: endpoint.apiKey,
          defaultHeaders: {
            "X-Api-Key": endpoint.apiKey,
            // R-X2: a settings apiKeyHelper's key goes in both headers, as Claude Code sends it.
            Authorization: endpoint.auth === "both" ? `Bearer ${endpoint.apiKey}` : null,
          },
        };
  const betas = endpoint.betas ?? [];
  const middleware = [
    ...(betas.length === 0 ? [] : [withBetas(betas)]),
    // R-X2: a helper's key refused with 401 is asked for again, and the request retried once.
    ...(endpoint.keyHelper === undefined
      ? []
      : [refreshOn401(endpoint.keyHelper, endpoint.apiKey, endpoint.auth === "both")]),
  ];
  return {
    ...auth,
    ...(endpoint.baseURL === undefined ? {} : { baseURL: endpoint.baseURL }),
    ...(middleware.length === 0 ? {} : { middleware }),
  };
}

/**
 * Adds `betas` to a request's `anthropic-beta`. A default header would not do: a request on the
 * beta endpoint (context editing) sets the header itself, and a request's header replaces the
 * client's — so the user's betas are merged in last, just before the request is sent.
 */
function withBetas(betas: readonly string[]): Middleware {
  return (request, next) => {
    const given = request.headers.get("anthropic-beta");
    const all = given === null ? [] : given.split(",").map((beta) => beta.trim());
    for (const beta of betas) if (!all.includes(beta)) all.push(beta);
    request.headers.set("anthropic-beta", all.join(","));
    return next(request);
  };
}
