/**
 * Text that forkloop's own views show — from files, tool output, file names, transcripts and the
 * model — made safe for a terminal (R-S14). A terminal acts on some characters instead of showing
 * them: ESC starts CSI (cursor moves, colours, clearing the screen), OSC 8 (a hyperlink whose
 * target is hidden) and OSC 52 (a write to the clipboard); BEL, backspace and a carriage return
 * rewrite what was shown; the C1 controls (U+0080–U+009F) are 8-bit CSI and OSC; the bidirectional
 * overrides and isolates reorder a line ("exe.txt" shown for "txt.exe"). Each of those is written
 * as its JSON escape (`\u001b`), so the view shows what is there and JSON output stays valid JSON
 * with the same meaning. Newlines and tabs stay.
 */
export function terminalText(text: string): string {
  let shown = "";
  let from = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (!actsOnTerminal(code)) continue;
    shown += `${text.slice(from, index)}\\u${code.toString(16).padStart(4, "0")}`;
    from = index + 1;
  }
  return from === 0 ? text : shown + text.slice(from);
}

function actsOnTerminal(code: number): boolean {
  if (code < 0x20) return code !== 0x0a && code !== 0x09;
  if (code < 0x7f) return false;
  return (
    code <= 0x9f || // DEL and the C1 controls
    code === 0x061c || // arabic letter mark
    code === 0x200e ||
    code === 0x200f || // left-to-right and right-to-left marks
    (code >= 0x2028 && code <= 0x202e) || // line and paragraph separators, embeddings and overrides
    (code >= 0x2066 && code <= 0x2069) // isolates
  );
}

const UNESCAPED = Symbol("the stream under a terminalStream");

type TextStream = { write(chunk: string | Uint8Array, ...rest: never[]): unknown };

/**
 * `stream` with every write passed through terminalText: a view's stream (every status line on
 * stderr, the output of the commands that show stored text). Everything else — `isTTY`,
 * `columns`, events — is the stream's own.
 */
export function terminalStream<S extends TextStream>(stream: S): S {
  const write = (chunk: string | Uint8Array, ...rest: never[]) =>
    stream.write(
      terminalText(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8")),
      ...rest,
    );
  return new Proxy(stream, {
    get(target, key) {
      if (key === "write") return write;
      if (key === UNESCAPED) return target;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * The stream under a terminalStream (else `stream` itself): for a display that writes its own
 * control sequences (the batch progress line's redraw) and its text through the escaping stream.
 */
export function unescapedStream<S extends object>(stream: S): S {
  return (Reflect.get(stream, UNESCAPED) as S | undefined) ?? stream;
}
