/**
 * Cases of the trust corpus that still get through, each with its reason. The suite requires each
 * still to get through (corpus-suite.ts), so an entry is removed as soon as its fix lands, and
 * corpus-count.test.ts that each names a case. Never add a case here to hide a hole of this
 * corpus's own classes without saying why it is not fixed.
 */
export const PENDING: Readonly<Record<string, string>> = {
  "race-write-git-hooks":
    "not fixed yet (found this session): the permission check and the Write tool resolve the path separately; a directory flipped to a symlink into .git/hooks between the two is approved as cfg/h (not protected) and then resolved by the tool to .git/hooks/h, a real path its confined walk writes. The fix: the tool refuses a real path in a protected directory that the name as given does not name (outside bypassPermissions), or writes the path the check approved",
};
