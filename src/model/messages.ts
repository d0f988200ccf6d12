/**
 * One conversation, as colony keeps it: provider-neutral, plain data, easy to log and rebuild.
 * Every provider adapter converts from this; nothing above model/ sees a provider's format.
 */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  /** The arguments exactly as the model produced them, normally JSON text; may be malformed. */
  readonly input: string;
}

export type Message =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: string }
  | { readonly role: 'assistant'; readonly text: string; readonly toolCalls: readonly ToolCall[] }
  | {
      readonly role: 'tool';
      readonly callId: string;
      readonly toolName: string;
      readonly content: string;
      readonly isError: boolean;
    };

/** Characters of a whole conversation: text, tool call names and arguments, tool results. */
export function conversationLength(messages: readonly Message[]): number {
  let length = 0;
  for (const message of messages) {
    if (message.role === 'assistant') {
      length += message.text.length;
      for (const call of message.toolCalls) length += call.name.length + call.input.length;
    } else {
      length += message.content.length;
    }
  }
  return length;
}
