/**
 * The loop's error family. Expected failures travel as data (terminal reasons, is_error
 * tool_results); these classes are for the few conditions that must unwind a call stack.
 */
export class ForkloopError extends Error {
  override readonly name: string = "ForkloopError";
}

/**
 * R-L8: the primary model stayed overloaded (529) after the model client's retries. The loop
 * catches it, switches to the next model of the fallback chain and retries the request.
 */
export class FallbackTriggeredError extends ForkloopError {
  override readonly name = "FallbackTriggeredError";
  constructor(
    readonly originalModel: string,
    readonly attempts: number,
  ) {
    super(`Model ${originalModel} stayed overloaded after ${attempts} attempts`);
  }
}

/**
 * R-R1: the server broke the SSE protocol (an event before `message_start`). The model client
 * treats it like a broken connection: the partial reply is discarded and the request retried.
 */
export class MalformedStreamError extends ForkloopError {
  override readonly name = "MalformedStreamError";
}
