import { structuredAnswer, text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "extraArgs read as CLI flags (--json-schema, --max-turns): the structured result",
  script: {
    main: (request) =>
      request.lastToolResults.length > 0 ? text("Done.") : structuredAnswer(request, { verdict: "ready" }),
  },
} satisfies ProgramCase;
