import { existsSync } from "node:fs";
import { join } from "node:path";
import { ensurePeers, PEERS_DIR } from "./ensure-peers.mjs";

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
