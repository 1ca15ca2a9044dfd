/** One line of a program's trace (instrument/recording-sdk.mjs writes them, in order). */
export type TraceEvent =
  | { kind: "query"; query: number }
  | { kind: "message"; query: number; message: Record<string, unknown> }
  | { kind: "hook"; query: number; event: string; input: Record<string, unknown>; toolUseID: string | null }
  | {
      kind: "canUseTool";
      query: number;
      toolName: string;
      input: Record<string, unknown>;
      options: Record<string, unknown>;
    }
  | { kind: "method"; query: number; name: string; ok: true; result: unknown }
  | { kind: "method"; query: number; name: string; ok: false; error: { name?: string; message: string } }
  | { kind: "error"; query: number; error: { name?: string; message: string } }
  | { kind: "end"; query: number };
