import { describe, expect, it } from "vitest";
import { expandEnv } from "./expand-env.js";

const env = { TOKEN: "t0k", EMPTY: "", HOST: "db.local" };

describe("R-M1: ${VAR} and ${VAR:-default} expansion", () => {
  it.each([
    ["Bearer ${TOKEN}", "Bearer t0k"],
    ["${HOST}:${PORT:-5432}", "db.local:5432"],
    ["${EMPTY:-fallback}", "fallback"], // as in a shell, an empty value takes the default
    ["${EMPTY}", ""],
    ["${TOKEN:-unused}", "t0k"],
    ["${API:-https://api.example.com}/mcp", "https://api.example.com/mcp"],
    ["$TOKEN and ${ not a reference", "$TOKEN and ${ not a reference"],
    ["no references", "no references"],
  ])("R-M1: %j → %j", (text, expected) => {
    expect(expandEnv(text, env)).toEqual({ ok: true, value: expected });
  });

  it("R-M1: an unset ${VAR} without a default is an error naming the variable", () => {
    expect(expandEnv("x ${MISSING} ${ALSO_MISSING}", env)).toEqual({ ok: false, variable: "MISSING" });
  });
});
