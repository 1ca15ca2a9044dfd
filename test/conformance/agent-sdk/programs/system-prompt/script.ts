import { text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "systemPrompt as a string and as the claude_code preset with append: what the request's system holds",
  systemTexts: ["You are a pirate. Answer like one.", "Always end with Arr!"],
  script: {
    main: (request) => text(request.lastUserText?.includes("again") ? "Ahoy again, Arr!" : "Ahoy, matey!"),
  },
} satisfies ProgramCase;
