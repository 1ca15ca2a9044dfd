import { describe, expect, it } from "vitest";
import { terminalStream, terminalText, unescapedStream } from "./terminal-text.js";

/** What a hostile file name, file or model reply can hold, by what the terminal would do with it. */
const HOSTILE: Readonly<Record<string, string>> = {
  "CSI: clear the screen, move the cursor": "\x1b[2J\x1b[H",
  "SGR: hide the text": "\x1b[8mhidden\x1b[0m",
  "OSC 8: a hyperlink hiding its target": "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
  "OSC 52: write the clipboard": "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07",
  BEL: "\x07",
  "backspace over what was shown": "rm -rf /\x08\x08\x08\x08\x08\x08\x08\x08ls",
  "carriage return overwriting the line": "evil\rsafe",
  "C1 CSI and OSC (8-bit)": "\u009b2J\u009d52;c;x\u009c",
  "DEL and a NUL": "\x7f\x00",
  "bidi override and isolate": "\u202egnp.exe\u202c \u2066x\u2069",
  "right-to-left mark, line separator": "\u200fa\u2028b",
};

/** Any character terminalText must not let through. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these characters are what the tests look for
const ACTS_ON_TERMINAL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;
const EVERY_ONE = new RegExp(ACTS_ON_TERMINAL.source, "g");

describe("R-S14: terminalText escapes what a terminal would act on", () => {
  for (const [name, text] of Object.entries(HOSTILE)) {
    it(name, () => {
      // Control: the raw text holds what the terminal would act on.
      expect(text).toMatch(ACTS_ON_TERMINAL);
      const shown = terminalText(`before ${text} after`);
      expect(shown).not.toMatch(ACTS_ON_TERMINAL);
      // Shown, not dropped: each is its escape, everything else stays in order.
      expect(shown.replace(/\\u00[0-9a-f]{2}|\\u(?:061c|200e|200f|202[89a-e]|206[6-9])/g, "")).toBe(
        `before ${text.replace(EVERY_ONE, "")} after`,
      );
      expect(shown).toContain(
        `\\u${(text.match(ACTS_ON_TERMINAL)?.[0] ?? "").charCodeAt(0).toString(16).padStart(4, "0")}`,
      );
    });
  }

  it("keeps newlines, tabs and ordinary text (accents, CJK, emoji) as they are", () => {
    const text = "line one\n\tcafé 日本語 😀 \\u001b stays text";
    expect(terminalText(text)).toBe(text);
  });

  it("JSON output escaped stays valid JSON with the same value", () => {
    const value = { name: HOSTILE["C1 CSI and OSC (8-bit)"], link: HOSTILE["bidi override and isolate"] };
    const shown = terminalText(JSON.stringify(value));
    expect(shown).not.toMatch(ACTS_ON_TERMINAL);
    expect(JSON.parse(shown)).toEqual(value);
  });
});

describe("R-S14: terminalStream escapes every write and is otherwise the stream", () => {
  const sink = () => {
    const written: string[] = [];
    return {
      written,
      isTTY: true,
      columns: 80,
      write(chunk: string | Uint8Array) {
        written.push(String(chunk));
        return true;
      },
    };
  };

  it("strings and bytes are escaped; isTTY and columns are the stream's", () => {
    const raw = sink();
    const stream = terminalStream(raw);
    stream.write(`ok ${HOSTILE["OSC 52: write the clipboard"]}\n`);
    stream.write(Buffer.from("\x1b[2J"));
    expect(raw.written.join("")).not.toMatch(ACTS_ON_TERMINAL);
    expect(raw.written.join("")).toContain("\\u001b]52;c;");
    expect([stream.isTTY, stream.columns]).toEqual([true, 80]);
  });

  it("unescapedStream gives the stream under it (a display's own redraw), and a plain stream itself", () => {
    const raw = sink();
    expect(unescapedStream(terminalStream(raw))).toBe(raw);
    expect(unescapedStream(raw)).toBe(raw);
  });
});
