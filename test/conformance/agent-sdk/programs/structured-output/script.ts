import { structuredAnswer, text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "outputFormat json_schema: how it is asked for and result.structured_output",
  script: {
    main: (request) =>
      request.lastToolResults.length > 0
        ? text("Done.")
        : structuredAnswer(request, { city: "Lisbon", population: 545000 }),
  },
} satisfies ProgramCase;
