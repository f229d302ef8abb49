import type { ChatMessage } from './chat-model.js';

/**
 * How retrieved memories reach a model: the chat service appends `memoryContext(memories)` to the
 * system message it sends. Real models read it as prose; the offline model reads it back with
 * `memoriesIn(messages)`, so both sides of that agreement live in this one file.
 *
 * Format (one memory a line, most relevant first, whitespace inside a memory collapsed so a
 * memory can never forge another line of the block):
 *
 *     Relevant memories:
 *     [1] The customer prefers e-mail.
 *     [2] Order ord_1234 shipped on 3 May.
 */
export const MEMORY_CONTEXT_HEADER = 'Relevant memories:';

const ITEM = /^\[(\d+)\] (.*)$/;

/** The block for the system message; '' when there is nothing to remember (leave it out). */
export function memoryContext(memories: readonly { content: string }[]): string {
  const lines = memories
    .map((memory) => oneLine(memory.content))
    .filter((content) => content.length > 0)
    .map((content, index) => `[${index + 1}] ${content}`);
  return lines.length === 0 ? '' : [MEMORY_CONTEXT_HEADER, ...lines].join('\n');
}

/**
 * The memories a `memoryContext` block in the system messages carries, in order. Only system
 * messages are read: a user who types the header cannot plant memories.
 */
export function memoriesIn(messages: readonly ChatMessage[]): string[] {
  const memories: string[] = [];
  for (const message of messages) {
    if (message.role !== 'system') continue;
    const lines = message.content.split(/\r?\n/);
    let inBlock = false;
    for (const line of lines) {
      if (line === MEMORY_CONTEXT_HEADER) {
        inBlock = true;
        continue;
      }
      const item = inBlock ? ITEM.exec(line) : null;
      if (item?.[2] === undefined) {
        inBlock = false;
        continue;
      }
      memories.push(item[2]);
    }
  }
  return memories;
}

/** A system message that joins the agent's own prompt and the memory block, either may be empty. */
export function systemMessage(systemPrompt: string | undefined, memories: readonly { content: string }[]): ChatMessage | undefined {
  const parts = [systemPrompt?.trim() ?? '', memoryContext(memories)].filter((part) => part.length > 0);
  return parts.length === 0 ? undefined : { role: 'system', content: parts.join('\n\n') };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
