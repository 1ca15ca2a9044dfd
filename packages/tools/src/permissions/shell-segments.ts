/**
 * Splits a shell command into its simple commands at `&&`, `||`, `;`, `|`, `&` and newlines,
 * outside quotes. Permission rules judge each part: `Bash(npm test:*)` must not allow
 * `npm test && rm -rf ~` just because the command starts right.
 */
export function splitShellCommand(command: string): string[] {
  const segments: string[] = [];
  let current = "";
  let quote: '"' | "'" | undefined;
  for (let index = 0; index < command.length; index++) {
    const char = command[index] as string;
    if (quote !== undefined) {
      current += char;
      if (char === "\\" && quote === '"' && index + 1 < command.length) current += command[++index];
      else if (char === quote) quote = undefined;
      continue;
    }
    if (char === "\\" && index + 1 < command.length) {
      current += char + command[++index];
      continue;
    }
    if (char === '"' || char === "'") {
      quote = char;
      current += char;
      continue;
    }
    if (char === ";" || char === "\n" || char === "|" || char === "&") {
      segments.push(current);
      current = "";
      // "&&" and "||" are one separator.
      if ((char === "&" || char === "|") && command[index + 1] === char) index++;
      continue;
    }
    current += char;
  }
  segments.push(current);
  return segments
    .map((segment) => segment.trim().replace(/\s+/g, " "))
    .filter((segment) => segment.length > 0);
}

/** Command or process substitution runs commands no rule can see, so such a command is never allowed by a rule. */
export function hasHiddenCommands(command: string): boolean {
  const withoutSingleQuoted = command.replace(/'[^']*'/g, "''");
  return /\$\(|`|<\(|>\(/.test(withoutSingleQuoted);
}
