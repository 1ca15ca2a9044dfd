/**
 * Request bodies for the prompt-cache and breakpoint unit tests: blocks of an exact token size
 * (textOfTokens), each salted so that different blocks never share a cache prefix by accident.
 * Not part of the package's API.
 */
import type { CountTokensRequest } from "../request-schema.js";
import { textOfTokens } from "../testing/index.js";

export const EPH = { type: "ephemeral" } as const;
export const EPH_1H = { type: "ephemeral", ttl: "1h" } as const;
export type Body = CountTokensRequest;

export const tools = (cache = false, salt = "abcd"): Body["tools"] => [
  {
    name: "Read",
    description: textOfTokens(20, salt),
    input_schema: { type: "object" },
    ...(cache ? { cache_control: EPH } : {}),
  },
];
export const system = (cache: typeof EPH | typeof EPH_1H | null = EPH, salt = "sysx") => [
  { type: "text" as const, text: textOfTokens(30, salt), ...(cache ? { cache_control: cache } : {}) },
];
export const user = (n: number, cache: typeof EPH | typeof EPH_1H | null = null, salt = "user") => ({
  role: "user" as const,
  content: [
    { type: "text" as const, text: textOfTokens(n, salt), ...(cache ? { cache_control: cache } : {}) },
  ],
});
export const assistant = (n: number, salt = "asst") => ({
  role: "assistant" as const,
  content: textOfTokens(n, salt),
});
