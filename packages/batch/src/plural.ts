/** `1 turn`, `2 turns`, `0 items`: a count with its noun in the right number. */
export function plural(count: number, noun: string, pluralNoun = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : pluralNoun}`;
}
