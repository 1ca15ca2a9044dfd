import { ForkloopError, lazySchema } from "@forkloop/loop-core";
import { z } from "zod";

/**
 * Error codes of the orchestrator. Expected failures travel as data with one of these codes;
 * only bugs and infrastructure faults throw an `OrchestratorError`.
 */
const ORCHESTRATOR_ERROR_CODES = [
  "worker_crashed",
  "worker_killed",
  "cancelled",
  "invalid_task",
  "model_error",
  "query_failed",
  "transcript_corrupt",
  "transcript_write_failed",
  "definition_invalid",
  "pool_closed",
  "internal",
] as const;

export type OrchestratorErrorCode = (typeof ORCHESTRATOR_ERROR_CODES)[number];

/**
 * An error as plain data. Errors crossing a worker boundary are sent in this shape and validated
 * with zod on the other side (STYLE.md §5): a thrown Error loses everything but name, message
 * and stack when structured-cloned, so the code must travel as a field.
 */
export const wireErrorSchema = lazySchema(() =>
  z.object({
    code: z.string(),
    message: z.string(),
    data: z.record(z.string(), z.unknown()).optional(),
  }),
);

export type WireError = z.infer<typeof wireErrorSchema>;

/** The orchestrator's one error class for faults that must throw (R-A7: of the ForkloopError family). */
export class OrchestratorError extends ForkloopError {
  override readonly name = "OrchestratorError";
  declare readonly code: OrchestratorErrorCode;

  constructor(code: OrchestratorErrorCode, message: string, data?: Record<string, unknown>) {
    super(message, { code, data });
  }

  toWire(): WireError {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** Turns anything thrown into wire data; unknown throws keep their message under `internal`. */
export function toWireError(error: unknown, fallbackCode: OrchestratorErrorCode = "internal"): WireError {
  if (error instanceof OrchestratorError) return error.toWire();
  const parsed = wireErrorSchema.safeParse(error);
  if (parsed.success) return parsed.data;
  if (error instanceof Error) return { code: fallbackCode, message: error.message };
  return { code: fallbackCode, message: String(error) };
}
