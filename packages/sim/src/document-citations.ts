import { type ApiError, invalidRequest } from "./api-error.js";
import { blocksOf } from "./conversation-turns.js";
import { documentsOf } from "./prompt-layout.js";
import type { ContentBlockParam, CountTokensRequest, MessagesRequest } from "./request-schema.js";
import type { BrainReply, Citation } from "./types.js";

type Document = Extract<ContentBlockParam, { type: "document" }>;

/**
 * Citations on documents (R-D4; citations page,
 * https://platform.claude.com/docs/en/build-with-claude/citations): enabled on all documents of a
 * request or on none, and not with structured outputs (structured outputs page: "incompatible with
 * citations"). Both wordings are UNCONFIRMED.
 */
export function checkCitations(body: CountTokensRequest): ApiError | null {
  const settings = new Set(allDocuments(body).map((doc) => doc.citations?.enabled === true));
  if (settings.size > 1) {
    return invalidRequest(
      "citations: citations must be enabled on all or none of the documents in a request",
    );
  }
  const structured =
    (body as MessagesRequest).output_config?.format != null ||
    (body as { output_format?: unknown }).output_format != null;
  if (settings.has(true) && structured) {
    return invalidRequest(
      "Citations are not supported together with structured outputs (output_config.format).",
    );
  }
  return null;
}

/**
 * With citations enabled, the reply's first text block cites each document — its first sentence
 * (`char_location` for plain text, `content_block_location` for custom content, `page_location`
 * page 1 for a PDF, whose text the simulator cannot read) — unless the brain gave citations
 * itself. `document_index` counts the request's documents in order (citations page). Which
 * passages a model cites is its own choice; the simulator's rule is only deterministic.
 */
export function citeDocuments(reply: BrainReply, body: MessagesRequest): BrainReply {
  const documents = allDocuments(body);
  if (!documents.some((doc) => doc.citations?.enabled === true)) return reply;
  const first = reply.content.findIndex((b) => b.type === "text");
  const block = reply.content[first];
  if (block?.type !== "text" || (block.citations?.length ?? 0) > 0) return reply;
  const citations = documents.map((doc, index) => citationOf(doc, index));
  const content = [...reply.content];
  content[first] = { ...block, citations };
  return { ...reply, content };
}

function citationOf(doc: Document, document_index: number): Citation {
  const base = { document_index, document_title: doc.title ?? null };
  const source = doc.source;
  if (source.type === "text") {
    const cited = firstSentence(source.data);
    return {
      type: "char_location",
      cited_text: cited,
      ...base,
      start_char_index: 0,
      end_char_index: cited.length,
      file_id: null,
    };
  }
  if (source.type === "content") {
    const blocks =
      typeof source.content === "string" ? [{ type: "text", text: source.content }] : source.content;
    const text = blocks.find((b) => b.type === "text");
    return {
      type: "content_block_location",
      cited_text: text && "text" in text ? text.text : "",
      ...base,
      start_block_index: 0,
      end_block_index: 1,
    };
  }
  return {
    type: "page_location",
    cited_text: "",
    ...base,
    start_page_number: 1,
    end_page_number: 2,
    file_id: source.type === "file" ? source.file_id : null,
  };
}

function allDocuments(body: CountTokensRequest): Document[] {
  return body.messages.flatMap((message) => blocksOf(message).flatMap(documentsOf));
}

function firstSentence(text: string): string {
  const end = text.search(/[.!?](\s|$)/);
  return (end < 0 ? text : text.slice(0, end + 1)).slice(0, 200);
}
