// Module resolution hooks of the program's process (see register.mjs). The program imports
// "@anthropic-ai/claude-agent-sdk" and resolves to recording-sdk.mjs; that module's own import of
// the same name resolves to the SDK under test. Other packages the program imports (zod, the MCP
// SDK) resolve from the SDK under test's location, so a program shares its SDK's copies of them,
// as it would in a project that installed only that SDK.
import { pathToFileURL } from "node:url";

const SDK = "@anthropic-ai/claude-agent-sdk";
const RECORDER = new URL("./recording-sdk.mjs", import.meta.url).href;
/** Packages an SDK and its program share (peer dependencies). */
const SHARED = ["zod", "@modelcontextprotocol/sdk", "@anthropic-ai/sdk"];
let entryURL = "";
let programsURL = "";

export function initialize(data) {
  entryURL = pathToFileURL(data.entry).href;
  programsURL = pathToFileURL(data.programs).href;
}

export async function resolve(specifier, context, next) {
  if (specifier === SDK) {
    return context.parentURL === RECORDER
      ? { url: entryURL, shortCircuit: true }
      : { url: RECORDER, shortCircuit: true };
  }
  const shared = SHARED.some((name) => specifier === name || specifier.startsWith(`${name}/`));
  if (shared && context.parentURL?.startsWith(programsURL)) {
    return next(specifier, { ...context, parentURL: entryURL });
  }
  return next(specifier, context);
}
