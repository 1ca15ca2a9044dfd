import { openQueue, type QueueAddress, QueueUnreachableError, QueueUnsafeError } from "@forkloop/batch";
import { CliError } from "./cli-error.js";

/**
 * `--queue URL` for `forkloop batch` and `forkloop worker`: reached, then checked (R-R10: an
 * evicting policy or a replica is refused, no persistence warned about on `notice`); an
 * unreachable or unsafe Redis is exit 2 naming the fix.
 */
export async function openCheckedQueue(address: QueueAddress, notice: (line: string) => void) {
  return openQueue(address, notice).catch((error: unknown) => {
    throw error instanceof QueueUnreachableError || error instanceof QueueUnsafeError
      ? new CliError(error.message)
      : error;
  });
}
