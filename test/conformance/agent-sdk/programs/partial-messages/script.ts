import { text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "includePartialMessages: stream_event messages and their order around the assistant message",
  script: { main: () => text("Once upon a time a tiny robot learned to whistle. The end.") },
} satisfies ProgramCase;
