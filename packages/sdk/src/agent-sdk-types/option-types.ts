import type { Readable, Writable } from "node:stream";
import type { PermissionMode } from "@forkloop/loop-core";
import type { ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import type { ZodRawShape } from "zod";
import type { McpHttpServerConfig, McpSSEServerConfig, McpStdioServerConfig } from "../options.js";
import type { McpServerToolPolicy } from "./control-types.js";

/**
 * The Agent SDK's types around `Options`: permission updates, output formats, thinking, the
 * sandbox, MCP configurations, and the process seams (`spawnClaudeCodeProcess`, a transport)
 * that have no meaning without a Claude Code process — typed so programs compile; ../options.ts
 * says what each option does in forkloop.
 */
export type PermissionBehavior = "allow" | "deny" | "ask";
export type PermissionUpdateDestination =
  | "userSettings"
  | "projectSettings"
  | "localSettings"
  | "session"
  | "cliArg";
export type ConfigScope = "local" | "user" | "project";

/** One permission rule as Claude Code names it: `{ toolName: "Bash", ruleContent: "npm test *" }`. */
export interface PermissionRuleValue {
  toolName: string;
  ruleContent?: string;
}

/** A change to the permission rules or mode (canUseTool's suggestions, `updatedPermissions`). */
export type PermissionUpdate =
  | {
      type: "addRules" | "replaceRules" | "removeRules";
      rules: PermissionRuleValue[];
      behavior: PermissionBehavior;
      destination: PermissionUpdateDestination;
    }
  | { type: "setMode"; mode: PermissionMode; destination: PermissionUpdateDestination }
  | {
      type: "addDirectories" | "removeDirectories";
      directories: string[];
      destination: PermissionUpdateDestination;
    };

export type OutputFormatType = "json_schema";
export interface BaseOutputFormat {
  type: OutputFormatType;
}
export interface JsonSchemaOutputFormat {
  type: "json_schema";
  schema: Record<string, unknown>;
}
export type OutputFormat = JsonSchemaOutputFormat;

export type SdkBeta = "context-1m-2025-08-07";
export interface SdkPluginConfig {
  type: "local";
  path: string;
  skipMcpDiscovery?: boolean;
}

export interface ThinkingAdaptive {
  type: "adaptive";
  display?: "summarized" | "omitted";
}
export interface ThinkingEnabled {
  type: "enabled";
  budgetTokens?: number;
  display?: "summarized" | "omitted";
}
export interface ThinkingDisabled {
  type: "disabled";
}

export interface ToolConfig {
  askUserQuestion?: { previewFormat?: "markdown" | "html" };
}

/** An MCP server given by the program itself, named: its tools' policies are the host's. */
export interface McpSdkServerConfig {
  type: "sdk";
  name: string;
  timeout?: number;
  tools?: McpServerToolPolicy[];
}
export type McpServerConfigForProcessTransport =
  | McpStdioServerConfig
  | McpSSEServerConfig
  | McpHttpServerConfig
  | McpSdkServerConfig;
/** A sub-agent's MCP servers: a server of the session by name, or its own configurations. */
export type AgentMcpServerSpec = string | Record<string, McpServerConfigForProcessTransport>;

export interface SandboxNetworkConfig {
  allowedDomains?: string[];
  deniedDomains?: string[];
  strictAllowlist?: boolean;
  allowManagedDomainsOnly?: boolean;
  allowUnixSockets?: string[];
  allowAllUnixSockets?: boolean;
  allowLocalBinding?: boolean;
  allowMachLookup?: string[];
  httpProxyPort?: number;
  socksProxyPort?: number;
  tlsTerminate?: { caCertPath?: string; caKeyPath?: string };
}
export interface SandboxFilesystemConfig {
  allowWrite?: string[];
  denyWrite?: string[];
  denyRead?: string[];
  allowRead?: string[];
  allowManagedReadPathsOnly?: boolean;
  disabled?: boolean;
}
/** Claude Code's credential masking for sandboxed commands (files, variables, AWS pairs). */
export interface SandboxCredentialsConfig {
  files?: Record<string, unknown>[];
  envVars?: Record<string, unknown>[];
  allowPlaintextInject?: boolean;
  awsPairs?: { accessKeyIdVar: string; secretAccessKeyVar: string; sessionTokenVar?: string }[];
  [key: string]: unknown;
}
export type SandboxIgnoreViolations = Record<string, string[]>;
/** Claude Code's sandbox settings (forkloop's Bash sandbox reads `enabled`; see Options.sandbox). */
export interface SandboxSettings {
  enabled?: boolean;
  failIfUnavailable?: boolean;
  autoAllowBashIfSandboxed?: boolean;
  allowUnsandboxedCommands?: boolean;
  network?: SandboxNetworkConfig;
  filesystem?: SandboxFilesystemConfig;
  credentials?: SandboxCredentialsConfig;
  ignoreViolations?: SandboxIgnoreViolations;
  enableWeakerNestedSandbox?: boolean;
  allowNestedUserNamespaces?: boolean;
  enableWeakerNetworkIsolation?: boolean;
  allowAppleEvents?: boolean;
  excludedCommands?: string[];
  ripgrep?: Record<string, unknown>;
  bwrapPath?: string;
  socatPath?: string;
}

/** Claude Code's settings file (`settings.json`); forkloop reads the keys its README lists. */
export interface Settings {
  $schema?: string;
  permissions?: {
    allow?: string[];
    deny?: string[];
    ask?: string[];
    defaultMode?: PermissionMode;
    additionalDirectories?: string[];
    disableBypassPermissionsMode?: "disable";
    [key: string]: unknown;
  };
  hooks?: Record<string, unknown>;
  env?: Record<string, string>;
  model?: string;
  sandbox?: SandboxSettings;
  [key: string]: unknown;
}

export type PolicySettingsOrigin = "helper" | "remote" | "plist" | "hklm" | "file" | "parent" | "hkcu";

/** A zod object shape (zod 4, or zod 3's, as `tool()` takes either). */
export type AnyZodRawShape = ZodRawShape;
/** The parsed type of each field of a shape. */
export type InferShape<Shape extends AnyZodRawShape> = {
  [Key in keyof Shape]: Shape[Key] extends { _output: infer Output } ? Output : never;
} & {};

/** An MCP server's question to the user (elicitation), and the answer. */
export interface ElicitationRequest {
  serverName: string;
  message: string;
  mode?: "form" | "url";
  url?: string;
  elicitationId?: string;
  requestedSchema?: Record<string, unknown>;
  title?: string;
  displayName?: string;
  description?: string;
}
export type ElicitationResult = ElicitResult;
export type OnElicitation = (
  request: ElicitationRequest,
  options: { signal: AbortSignal; requestId: string },
) => Promise<ElicitationResult | null>;

/** A dialog a tool asks the host to show (Claude Code's interactive tools). */
export interface UserDialogRequest {
  dialogKind: string;
  payload: Record<string, unknown>;
  toolUseID?: string;
}
export type UserDialogResult = { behavior: "completed"; result: unknown } | { behavior: "cancelled" };
export type OnUserDialog = (
  request: UserDialogRequest,
  options: { signal: AbortSignal; requestId: string },
) => Promise<UserDialogResult | null>;

/** How the Agent SDK would start Claude Code (`spawnClaudeCodeProcess`): no process here. */
export interface SpawnOptions {
  command: string;
  args: string[];
  cwd?: string;
  env: { [name: string]: string | undefined };
  signal: AbortSignal;
}
export interface SpawnedProcess {
  stdin: Writable;
  stdout: Readable;
  readonly killed: boolean;
  readonly exitCode: number | null;
  readonly signalCode?: NodeJS.Signals | null;
  kill(signal: NodeJS.Signals): boolean;
  on(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  on(event: "error", listener: (error: Error) => void): void;
  once(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  once(event: "error", listener: (error: Error) => void): void;
  off(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): void;
  off(event: "error", listener: (error: Error) => void): void;
}
/** The Agent SDK's channel to a Claude Code process; forkloop runs sessions in-process. */
export interface Transport {
  write(data: string): void | Promise<void>;
  close(): void;
  isReady(): boolean;
  readMessages(): AsyncGenerator<unknown, void, unknown>;
  expectControlResponse?(requestId: string): void;
  markDelivered?(message: object): void;
  endInput(): void;
  waitForExit?(): Promise<void>;
}

/** Why a turn ended, in Claude Code's words (forkloop's result carries its own `terminal_reason`). */
export type TerminalReason =
  | "blocking_limit"
  | "rapid_refill_breaker"
  | "prompt_too_long"
  | "image_error"
  | "model_error"
  | "api_error"
  | "malformed_tool_use_exhausted"
  | "aborted_streaming"
  | "aborted_tools"
  | "stop_hook_prevented"
  | "hook_stopped"
  | "tool_deferred"
  | "max_turns"
  | "background_requested"
  | "completed"
  | "budget_exhausted"
  | "structured_output_retry_exhausted"
  | "tool_deferred_unavailable"
  | "turn_setup_failed";
