/**
 * The simulator's deterministic tokenizer: every usage figure it reports comes from here.
 *
 * Rule (documented in the README): walk the text once;
 * - a run of ASCII letters, digits and `_` costs one token per started 4 characters
 *   ("cat" = 1, "simulator" = 3);
 * - whitespace is free;
 * - every other character (punctuation, symbols, CJK and any other non-ASCII code point)
 *   costs one token.
 * It is not Claude's tokenizer (there is no accurate offline one, api doc §10); it lands near
 * the usual "about 4 characters per token" for English prose and code, and it is stable.
 */
export function countTokens(text: string): number {
  let tokens = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (isWordChar(c)) {
      run++;
      continue;
    }
    if (run > 0) {
      tokens += Math.ceil(run / 4);
      run = 0;
    }
    if (c === 32 || c === 9 || c === 10 || c === 13) continue;
    // A surrogate pair is one code point, hence one token.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) i++;
    tokens++;
  }
  if (run > 0) tokens += Math.ceil(run / 4);
  return tokens;
}

function isWordChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
}

/**
 * The longest prefix of `text`, cut at whitespace, whose token count is at most `limit`
 * (used for `max_tokens` cuts). A first word longer than the limit is cut by characters.
 */
export function truncateToTokens(text: string, limit: number): string {
  if (limit <= 0) return "";
  if (countTokens(text) <= limit) return text;
  const pieces = text.split(/(?<=\s)/);
  let out = "";
  let used = 0;
  for (const piece of pieces) {
    const cost = countTokens(piece);
    if (used + cost > limit) {
      if (out === "") return piece.slice(0, limit);
      break;
    }
    out += piece;
    used += cost;
  }
  return out;
}

/** Splits text into consecutive pieces of about `tokensPerPiece` tokens, cut after whitespace. */
export function splitByTokens(text: string, tokensPerPiece: number): string[] {
  const pieces = text.split(/(?<=\s)/);
  const out: string[] = [];
  let current = "";
  let used = 0;
  for (const piece of pieces) {
    const cost = countTokens(piece);
    if (current !== "" && used + cost > tokensPerPiece) {
      out.push(current);
      current = "";
      used = 0;
    }
    current += piece;
    used += cost;
  }
  if (current !== "" || out.length === 0) out.push(current);
  return out;
}
