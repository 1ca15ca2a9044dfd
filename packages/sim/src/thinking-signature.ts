import { createHmac } from "node:crypto";

/**
 * The simulator signs every thinking block it emits with an HMAC of the thinking text, so it can
 * reject a thinking block that comes back modified, as the API does (api doc §8).
 */
const KEY = "forkloop-simulator-thinking-v1";

export function signThinking(thinking: string): string {
  return createHmac("sha256", KEY).update(thinking).digest("base64");
}

export function isValidThinkingSignature(thinking: string, signature: string): boolean {
  return signThinking(thinking) === signature;
}
