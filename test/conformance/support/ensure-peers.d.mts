/** The directory of the pinned peers' package.json, lockfile and (ignored) node_modules. */
export declare const PEERS_DIR: string;
/** Installs the pinned peers unless the same lockfile's install is already there. */
export declare function ensurePeers(options?: { quiet?: boolean }): void;
/** The directory of the newest @anthropic-ai/sdk's package.json, lockfile and (ignored) node_modules. */
export declare const NEWEST_SDK_DIR: string;
/** Installs the newest @anthropic-ai/sdk unless the same lockfile's install is already there. */
export declare function ensureNewestSdk(options?: { quiet?: boolean }): void;
