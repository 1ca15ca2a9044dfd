/** The directory of the pinned peers' package.json, lockfile and (ignored) node_modules. */
export declare const PEERS_DIR: string;
/** Installs the pinned peers unless the same lockfile's install is already there. */
export declare function ensurePeers(options?: { quiet?: boolean }): void;
