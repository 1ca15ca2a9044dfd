import type Anthropic from "@anthropic-ai/sdk";
import { BaseAnthropic, type ClientOptions } from "@anthropic-ai/sdk/client";
import { Messages as BetaMessages } from "@anthropic-ai/sdk/resources/beta/messages/messages";
import { Messages } from "@anthropic-ai/sdk/resources/messages/messages";

/**
 * The API client of a worker thread: the SDK's base client with the two resources a sub-agent
 * calls (Messages, and beta Messages for context editing). The full client constructs every
 * resource of the API (organizations, files, skills, …), and bundled into the worker it was 1.1
 * of the 2 MB of JavaScript a cold thread compiled before its first fork could start (R-V2).
 */
class WorkerClient extends BaseAnthropic {
  readonly messages = new Messages(this);
  readonly beta = { messages: new BetaMessages(this) };
}

/**
 * Typed as the full client, which the loop's model calls take: they use `messages` and
 * `beta.messages` only (every sub-agent of the pool tests sends its requests through it).
 */
export function createWorkerClient(options: ClientOptions): Anthropic {
  return new WorkerClient(options) as unknown as Anthropic;
}
