import { join, resolve } from "node:path";
import { OptionsError } from "./options-error.js";

/** Where forkloop keeps its state for a working directory: `<cwd>/.forkloop/…`. */
export function stateDir(cwd: string): string {
  return join(resolve(cwd), ".forkloop");
}

export function sessionsDir(cwd: string): string {
  return join(stateDir(cwd), "sessions");
}

export function batchesDir(cwd: string): string {
  return join(stateDir(cwd), "batches");
}

/** Ids become path segments: refuse anything that could escape the state directory. */
export function checkId(kind: "session" | "batch", id: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(id) || id.includes("..")) {
    throw new OptionsError(
      `"${id}" is not a valid ${kind} id (letters, digits, ".", "_" and "-" only). ${
        kind === "session"
          ? "List them with `forkloop sessions list`."
          : "Batch ids are printed when a batch starts; the batches are the directories of .forkloop/batches/."
      }`,
    );
  }
  return id;
}
