/**
 * What a file-system errno means and how the user fixes it, in the words every forkloop message
 * uses (R-R4: a full or read-only disk is a message naming the fix, never a stack trace).
 */
const ERRNO_REASONS: Readonly<Record<string, string>> = {
  ENOSPC: "no space left on the device (ENOSPC)",
  EDQUOT: "the disk quota is used up (EDQUOT)",
  EROFS: "the file system is read-only (EROFS)",
  EACCES: "permission denied (EACCES)",
  EPERM: "operation not permitted (EPERM)",
  EIO: "an input/output error of the device (EIO)",
  ENOTDIR: "a file stands where a directory should be (ENOTDIR)",
  EISDIR: "a directory stands where a file should be (EISDIR)",
  EEXIST: "a file of that name already exists (EEXIST)",
  EMFILE: "too many open files (EMFILE)",
  ENAMETOOLONG: "the path is too long (ENAMETOOLONG)",
};

/** Whether forkloop knows what this errno means for the user (an expected failure, not a bug). */
export function isKnownErrno(code: string): boolean {
  return ERRNO_REASONS[code] !== undefined;
}

export function errnoReason(code: string): string {
  return ERRNO_REASONS[code] ?? `the write failed (${code || "unknown error"})`;
}

export function errnoFix(code: string): string {
  switch (code) {
    case "ENOSPC":
    case "EDQUOT":
      return "free some space";
    case "EROFS":
      return "remount it writable or point --cwd / --output elsewhere";
    case "EACCES":
    case "EPERM":
      return "make it writable for this user or point --cwd / --output elsewhere";
    case "ENOTDIR":
    case "EISDIR":
    case "EEXIST":
      return "move the file that is in the way";
    case "EMFILE":
      return "raise the open-file limit (ulimit -n)";
    default:
      return "check the device";
  }
}

export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
