import type { ToolResultMeta } from "@forkloop/loop-core";
import type { SDKUserMessage } from "./messages.js";

type MetaEntry = NonNullable<SDKUserMessage["tool_result_meta"]>[number];

/** R-K2: one tool result's `tool_result_meta` entry as Claude Code prints it (the field order its own). */
export function toolResultMetaEntry(toolUseId: string, meta: ToolResultMeta): MetaEntry {
  const permission = meta.permission;
  return {
    id: toolUseId,
    ...(meta.notRun === undefined ? {} : { non_execution_kind: meta.notRun }),
    ...(meta.inputChanged === true ? { input_changed: true } : {}),
    ...(permission === undefined
      ? {}
      : {
          permission_decision: {
            decision: permission.decision,
            source: permission.source,
            ...(permission.reasonType === undefined ? {} : { reason_type: permission.reasonType }),
          },
        }),
  };
}
