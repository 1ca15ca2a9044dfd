import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "tool() and createSdkMcpServer: the model calls the in-process tool, its result comes back",
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("mcp__weather__get_temperature", { city: "Lisbon" }),
        text(`Lisbon: ${request.lastToolResults[0]?.content ?? "?"}`),
      ]),
  },
} satisfies ProgramCase;
