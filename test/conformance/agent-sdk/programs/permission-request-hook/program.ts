// A PermissionRequest hook beside canUseTool, as in the Agent SDK's "Handling permissions" guide:
// both are asked at once; the hook answers first for writing copy.txt (allow) and for Bash (deny),
// where a slower canUseTool would have denied; writing notes.txt, which the hook leaves open, is
// canUseTool's to allow. Read needs no permission and asks no one.
import { type CanUseTool, type HookCallback, query } from "@anthropic-ai/claude-agent-sdk";

const permissionRequest: HookCallback = async (input) => {
  if (input.hook_event_name !== "PermissionRequest") return {};
  console.log(`permission request for ${input.tool_name}`);
  const file = String((input.tool_input as { file_path?: string }).file_path ?? "");
  if (input.tool_name === "Write" && file.endsWith("copy.txt")) {
    return { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } } };
  }
  if (input.tool_name === "Bash") {
    return {
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "No shell from this hook" },
      },
    };
  }
  return {};
};

const canUseTool: CanUseTool = async (toolName, input) => {
  console.log(`asked about ${toolName}`);
  if (String(input.file_path ?? "").endsWith("notes.txt")) return { behavior: "allow", updatedInput: input };
  // Slower than the hook, and of the other opinion: the first decision counts.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  return { behavior: "deny", message: `canUseTool says no to ${toolName}` };
};

for await (const message of query({
  prompt: "Read notes.txt, write copy.txt, run ls, then rewrite notes.txt.",
  options: { canUseTool, hooks: { PermissionRequest: [{ hooks: [permissionRequest] }] } },
})) {
  if (message.type === "result") {
    console.log(
      `${message.subtype}: denials ${message.permission_denials.map((d) => d.tool_name).join(",")}`,
    );
  }
}
