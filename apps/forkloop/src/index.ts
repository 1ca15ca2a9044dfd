/**
 * `forkloop`: the package users install. Its bin is the `forkloop` command (@forkloop/cli); as a
 * library it is the forkloop SDK, so `npm i forkloop` gives both, as one install.
 */
export * from "@forkloop/sdk";
