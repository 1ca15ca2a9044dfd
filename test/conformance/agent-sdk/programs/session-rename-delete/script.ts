import { text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "renameSession, tagSession, getSessionInfo, deleteSession",
  script: { main: () => text("Grocery list: milk.") },
} satisfies ProgramCase;
