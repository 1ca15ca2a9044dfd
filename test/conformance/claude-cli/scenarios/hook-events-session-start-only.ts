import type { CliScenario } from "../scenario.js";
import withHookEvents from "./include-hook-events.js";

// The same run and hooks as include-hook-events, without the flag.
export default {
  ...withHookEvents,
  what: "stream-json without --include-hook-events: only SessionStart's hook runs are printed",
  args: withHookEvents.args.filter((arg) => arg !== "--include-hook-events"),
} satisfies CliScenario;
