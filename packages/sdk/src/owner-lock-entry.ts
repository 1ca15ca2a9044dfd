/** `@forkloop/sdk/owner-lock`: the exclusive owner locks of batches and sessions (R-R5), without the rest of the SDK. */
export {
  judgeOwner,
  type LockOwner,
  type OwnerVerdict,
  type ProcessProbe,
  processCommand,
  procProbe,
} from "./lock-owner.js";
export {
  acquireOwnerLock,
  type HeldLock,
  type LockContents,
  LockHeldError,
  type OwnerLockOptions,
  readLockFile,
} from "./owner-lock.js";
