import { text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "Query methods (supportedModels, supportedCommands, mcpServerStatus, initializationResult, setPermissionMode, setModel, getContextUsage)",
  script: { main: () => text("Hello to you.") },
} satisfies ProgramCase;
