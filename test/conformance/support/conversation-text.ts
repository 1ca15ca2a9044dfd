/** Text views of a Messages request body that scripts and role matching read. */

/** The parts of a Messages request body the harness reads (a validated or a raw logged body). */
export interface RequestBody {
  model?: string | undefined;
  system?: string | readonly { type: string; text?: string | undefined }[] | undefined;
  tools?: readonly { name: string }[] | undefined;
  messages: readonly { role: string; content: string | readonly Block[] }[];
}

export interface Block {
  type: string;
  text?: string | undefined;
  name?: string | undefined;
  input?: unknown;
  id?: string | undefined;
  tool_use_id?: string | undefined;
  content?: string | readonly { type: string; text?: string | undefined }[] | undefined;
  is_error?: boolean | undefined;
}

export function blocksOf(content: string | readonly Block[]): readonly Block[] {
  return typeof content === "string" ? [{ type: "text", text: content }] : content;
}

/** A user message's own text: its text blocks without Claude Code's `<system-reminder>` blocks. */
export function userText(content: string | readonly Block[]): string {
  return blocksOf(content)
    .flatMap((block) =>
      block.type === "text" && block.text !== undefined ? [stripReminders(block.text)] : [],
    )
    .filter((text) => text.trim() !== "")
    .join("\n");
}

export function stripReminders(text: string): string {
  return text.replace(/<system-reminder>[\s\S]*?<\/system-reminder>\s*/g, "");
}

export function systemText(body: RequestBody): string {
  const system = body.system;
  if (system === undefined) return "";
  return typeof system === "string" ? system : system.map((block) => block.text ?? "").join("\n");
}

export function toolResultText(block: Block): string {
  const content = block.content;
  if (content === undefined) return "";
  return typeof content === "string" ? content : content.map((part) => part.text ?? "").join("\n");
}
