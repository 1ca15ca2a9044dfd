/**
 * Keeps the first and last `maxChars / 2` characters of a stream and counts what fell in between,
 * so a command that prints megabytes costs bounded memory and the model still sees how it began
 * and how it ended (R-T3: "output capped with head and tail kept").
 */
export class HeadTailBuffer {
  private head = "";
  private tail = "";
  private omitted = 0;
  private readonly half: number;

  constructor(maxChars: number) {
    if (!Number.isFinite(maxChars) || maxChars < 2)
      throw new RangeError(`HeadTailBuffer: maxChars must be >= 2`);
    this.half = Math.floor(maxChars / 2);
  }

  append(chunk: string): void {
    if (this.head.length < this.half) {
      const room = this.half - this.head.length;
      this.head += chunk.slice(0, room);
      chunk = chunk.slice(room);
      if (chunk.length === 0) return;
    }
    const joined = this.tail + chunk;
    if (joined.length <= this.half) {
      this.tail = joined;
      return;
    }
    this.omitted += joined.length - this.half;
    this.tail = joined.slice(joined.length - this.half);
  }

  get omittedChars(): number {
    return this.omitted;
  }

  toString(): string {
    if (this.omitted === 0) return this.head + this.tail;
    // A cut inside a surrogate pair would leave a lone half (invalid UTF-16, sent to
    // the model as U+FFFD or refused); the half goes with the omitted middle.
    const head = isHighSurrogate(this.head.charCodeAt(this.head.length - 1))
      ? this.head.slice(0, -1)
      : this.head;
    const tail = isLowSurrogate(this.tail.charCodeAt(0)) ? this.tail.slice(1) : this.tail;
    const omitted = this.omitted + (this.head.length - head.length) + (this.tail.length - tail.length);
    return `${head}\n\n… ${omitted} characters omitted …\n\n${tail}`;
  }
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** The same cut for a string already in memory. */
export function capHeadTail(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const buffer = new HeadTailBuffer(maxChars);
  buffer.append(text);
  return buffer.toString();
}
