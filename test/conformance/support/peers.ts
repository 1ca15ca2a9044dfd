import { existsSync } from "node:fs";
import { join } from "node:path";
import { ensureNewestSdk, ensurePeers, NEWEST_SDK_DIR, PEERS_DIR } from "./ensure-peers.mjs";

const modules = join(PEERS_DIR, "node_modules", "@anthropic-ai");
const platform = `${process.platform}-${process.arch}`;

/** Where the pinned real peers are once installed (ensure-peers.mjs). */
export const peers = {
  /** The Claude Agent SDK's entry module and its declarations. */
  agentSdkEntry: join(modules, "claude-agent-sdk", "sdk.mjs"),
  agentSdkTypes: join(modules, "claude-agent-sdk", "sdk.d.ts"),
  /** The Claude Code binary the Agent SDK runs (its platform package). */
  agentSdkClaudeBinary: join(modules, `claude-agent-sdk-${platform}`, "claude"),
  /** The Claude Code CLI (`claude -p`), the platform package's native binary. */
  claudeCodeBinary: join(modules, `claude-code-${platform}`, "claude"),
  /** TypeScript 5's compiler (a script for node): it still has moduleResolution "node". */
  typescript5Tsc: join(PEERS_DIR, "node_modules", "typescript", "bin", "tsc"),
  /** The peers' own node_modules (their @anthropic-ai/sdk, MCP SDK and zod). */
  nodeModules: join(PEERS_DIR, "node_modules"),
} as const;

/** Installs the peers unless the same pinned install is there, and checks the files exist. */
export function ensurePeersInstalled(): typeof peers {
  ensurePeers({ quiet: true });
  for (const [name, path] of Object.entries(peers)) {
    if (!existsSync(path))
      throw new Error(`conformance peers: ${name} is missing at ${path} (platform ${platform})`);
  }
  return peers;
}

const newestSdkModule = join(NEWEST_SDK_DIR, "node_modules", "@anthropic-ai", "sdk");

/** Where the newest @anthropic-ai/sdk is once installed (ensure-peers.mjs, ../newest-sdk). */
export const newestSdk = {
  /** Its package.json (the version) and entry module. */
  packageJson: join(newestSdkModule, "package.json"),
  entry: join(newestSdkModule, "index.mjs"),
  /** `betaTool` (a runnable tool from a JSON schema, for `beta.messages.toolRunner`). */
  betaJsonSchemaHelpers: join(newestSdkModule, "helpers", "beta", "json-schema.mjs"),
} as const;

/** Installs the newest @anthropic-ai/sdk unless the same pinned install is there. */
export function ensureNewestSdkInstalled(): typeof newestSdk {
  ensureNewestSdk({ quiet: true });
  for (const [name, path] of Object.entries(newestSdk)) {
    if (!existsSync(path)) throw new Error(`newest @anthropic-ai/sdk: ${name} is missing at ${path}`);
  }
  return newestSdk;
}
