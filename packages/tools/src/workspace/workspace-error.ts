import { ForkloopError } from "@forkloop/loop-core/errors";

/**
 * R-A7: an isolated workspace that cannot be made as asked (a repository without a commit, a
 * worktree outside git, a damaged record). The caller can fix it: the message names the fix, and
 * its code is the options' one, so the CLI exits 2.
 */
export class WorkspaceError extends ForkloopError {
  override readonly name: string = "WorkspaceError";
  constructor(message: string) {
    super(message, { code: "invalid_options" });
  }
}
