import { basename } from "node:path";
import { literalValue, type ShellWord } from "./shell-word.js";

/** Where the system's own programs live: `/usr/bin/rm` is `rm`; `./rm` is the workspace's file. */
const SYSTEM_PROGRAM = /^\/(?:usr\/)?(?:local\/)?s?bin\/[^/]+$/;

/**
 * The program a command runs, as allow rules and the read-only table know it: `rm`, `/bin/rm`,
 * `\rm` and `"rm"` are all `rm`; a path elsewhere (`./ls`, `node_modules/.bin/x`) stays as
 * written, so a workspace script named `ls` is never taken for the system's `ls`. Undefined for a
 * name only known at run time.
 */
export function programName(word: ShellWord | undefined): string | undefined {
  const value = literalValue(word);
  if (value === undefined) return undefined;
  return SYSTEM_PROGRAM.test(value) ? basename(value) : value;
}

/**
 * The name deny rules match (R-S3): the base name of any path, so `Bash(rm:*)` also denies
 * `/bin/rm`, `./rm` and `../../bin/rm`.
 */
export function denyName(word: ShellWord | undefined): string | undefined {
  const value = literalValue(word);
  if (value === undefined) return undefined;
  return value.includes("/") ? basename(value) : value;
}
