// `node --import ./register.mjs program.js`: swaps the program's "@anthropic-ai/claude-agent-sdk"
// import for the recording module, which re-exports the SDK under test (CONFORMANCE_SDK_ENTRY: the
// real Agent SDK's entry or @forkloop/sdk's) and records what the program sees.
import { register } from "node:module";

const entry = process.env.CONFORMANCE_SDK_ENTRY;
const programs = process.env.CONFORMANCE_PROGRAMS_DIR;
if (!entry || !programs) {
  throw new Error(
    "CONFORMANCE_SDK_ENTRY and CONFORMANCE_PROGRAMS_DIR must be set (the SDK under test, the compiled programs)",
  );
}
register("./resolve-hooks.mjs", import.meta.url, { data: { entry, programs } });
