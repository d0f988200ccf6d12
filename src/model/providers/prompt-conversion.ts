import type {
  JSONSchema7,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultOutput,
} from '@ai-sdk/provider';
import type { ToolSpec } from '../chat-model.js';
import type { Message, ToolCall } from '../messages.js';

/**
 * colony's conversation in the provider contract's prompt format. Tool results travel as text
 * (`error-text` when the tool failed); an assistant's tool call carries its arguments as the raw
 * string the model produced, which every provider serializes verbatim. Arguments that are not a
 * JSON object cannot be sent back to some providers at all (the Anthropic API rejects them, and
 * the OpenAI adapter silently replaces them with `{}`), so those become `{}` everywhere: the tool
 * result that follows already tells the model what was wrong with its call.
 */
export function messagesToPrompt(messages: readonly Message[]): LanguageModelV3Prompt {
  return messages.map(messageToPromptMessage);
}

function messageToPromptMessage(message: Message): LanguageModelV3Message {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return { role: 'user', content: [{ type: 'text', text: message.content }] };
    case 'assistant':
      return {
        role: 'assistant',
        content: [
          ...(message.text === '' ? [] : [{ type: 'text' as const, text: message.text }]),
          ...message.toolCalls.map((call) => ({
            type: 'tool-call' as const,
            toolCallId: call.id,
            toolName: call.name,
            input: isJsonObjectText(call.input) ? call.input : '{}',
          })),
        ],
      };
    case 'tool':
      return {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: message.callId,
            toolName: message.toolName,
            output: message.isError
              ? { type: 'error-text', value: message.content }
              : { type: 'text', value: message.content },
          },
        ],
      };
  }
}

/** colony's tool specs as the provider contract's function tools. */
export function toolSpecsToFunctionTools(tools: readonly ToolSpec[]): LanguageModelV3FunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as JSONSchema7,
  }));
}

/** The reverse of `toolSpecsToFunctionTools`, for code that serves a model rather than calls one. */
export function functionToolsToToolSpecs(tools: readonly LanguageModelV3FunctionTool[]): ToolSpec[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description ?? '',
    inputSchema: tool.inputSchema as Record<string, unknown>,
  }));
}

/**
 * A prompt in the provider contract's format as colony's messages: the direction needed by code
 * that serves a model (the HTTP test server, the simulated model). Parts colony never produces
 * (files, reasoning, approvals) are dropped; several text parts of one message are joined.
 */
export function promptToMessages(prompt: LanguageModelV3Prompt): Message[] {
  const messages: Message[] = [];
  for (const message of prompt) {
    switch (message.role) {
      case 'system':
        messages.push({ role: 'system', content: message.content });
        break;
      case 'user':
        messages.push({ role: 'user', content: joinText(message.content) });
        break;
      case 'assistant': {
        const toolCalls: ToolCall[] = [];
        for (const part of message.content) {
          if (part.type === 'tool-call') {
            toolCalls.push({ id: part.toolCallId, name: part.toolName, input: inputAsText(part.input) });
          }
        }
        messages.push({ role: 'assistant', text: joinText(message.content), toolCalls });
        break;
      }
      case 'tool':
        for (const part of message.content) {
          if (part.type !== 'tool-result') continue;
          messages.push({
            role: 'tool',
            callId: part.toolCallId,
            toolName: part.toolName,
            ...toolOutputAsText(part.output),
          });
        }
        break;
    }
  }
  return messages;
}

function joinText(parts: readonly { readonly type: string; readonly text?: string }[]): string {
  return parts.map((part) => (part.type === 'text' && part.text !== undefined ? part.text : '')).join('');
}

function inputAsText(input: unknown): string {
  return typeof input === 'string' ? input : JSON.stringify(input ?? {});
}

function toolOutputAsText(output: LanguageModelV3ToolResultOutput): { content: string; isError: boolean } {
  switch (output.type) {
    case 'text':
      return { content: output.value, isError: false };
    case 'error-text':
      return { content: output.value, isError: true };
    case 'json':
      return { content: JSON.stringify(output.value), isError: false };
    case 'error-json':
      return { content: JSON.stringify(output.value), isError: true };
    case 'execution-denied':
      return { content: output.reason ?? 'The tool call was denied.', isError: true };
    case 'content':
      return { content: joinText(output.value), isError: false };
  }
}

/** Whether `text` parses as a JSON object: the only tool arguments every provider accepts back. */
export function isJsonObjectText(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
