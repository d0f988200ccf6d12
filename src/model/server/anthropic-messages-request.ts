import type {
  JSONSchema7,
  LanguageModelV3Message,
  LanguageModelV3ToolCallPart,
  LanguageModelV3ToolResultPart,
} from '@ai-sdk/provider';
import { z } from 'zod';
import { MAX_BREAKPOINTS, promptUnit } from './prompt-cache.js';
import type { CacheablePrompt } from './prompt-cache.js';
import type { ModelCall, ParsedRequest } from './wire-format.js';

/** A prompt-cache breakpoint; allowed on tool definitions, system blocks and content blocks. */
const cacheControlSchema = z.looseObject({ type: z.literal('ephemeral'), ttl: z.enum(['5m', '1h']).optional() });

const textBlockSchema = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: cacheControlSchema.optional() });

const blockSchema = z.looseObject({
  type: z.string(),
  cache_control: cacheControlSchema.optional(),
  text: z.string().optional(),
  id: z.string().optional(),
  name: z.string().optional(),
  input: z.unknown().optional(),
  tool_use_id: z.string().optional(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string(), text: z.string().optional() }))]).optional(),
  is_error: z.boolean().optional(),
});

const requestSchema = z.object({
  model: z.string(),
  max_tokens: z.number().int().positive(),
  system: z.union([z.string(), z.array(textBlockSchema)]).optional(),
  messages: z
    .array(z.object({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(blockSchema)]) }))
    .min(1),
  tools: z
    .array(
      z.looseObject({
        name: z.string(),
        description: z.string().optional(),
        input_schema: z.record(z.string(), z.unknown()),
        cache_control: cacheControlSchema.optional(),
      }),
    )
    .optional(),
  tool_choice: z.looseObject({ type: z.string() }).optional(),
  stream: z.boolean().optional(),
});

type AnthropicRequest = z.infer<typeof requestSchema>;
type Block = z.infer<typeof blockSchema>;
type Converted = { ok: true; messages: LanguageModelV3Message[] } | { ok: false; error: string };

/** An Anthropic messages request body as a model call, or what is wrong with it. */
export function parseAnthropicMessagesRequest(body: unknown): ParsedRequest {
  const parsed = requestSchema.safeParse(body);
  if (!parsed.success) return { ok: false, error: `Invalid request body: ${z.prettifyError(parsed.error)}` };
  const request = parsed.data;
  const cacheable = cacheablePrompt(request);
  const breakpoints = cacheable.units.filter((unit) => unit.breakpoint).length;
  if (breakpoints > MAX_BREAKPOINTS) {
    return { ok: false, error: `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints}.` };
  }
  const prompt: LanguageModelV3Message[] = [];
  const system = typeof request.system === 'string' ? request.system : (request.system ?? []).map((block) => block.text).join('\n');
  if (system !== '') prompt.push({ role: 'system', content: system });
  const toolNames = new Map<string, string>();
  for (const [index, message] of request.messages.entries()) {
    const blocks: Block[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    const converted =
      message.role === 'assistant' ? assistantMessage(blocks, toolNames) : userMessages(blocks, toolNames);
    if (!converted.ok) return { ok: false, error: `messages.${index}: ${converted.error}` };
    prompt.push(...converted.messages);
  }
  return {
    ok: true,
    call: {
      model: request.model,
      prompt,
      tools: (request.tools ?? []).map((tool) => ({
        type: 'function',
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        inputSchema: tool.input_schema as JSONSchema7,
      })),
      toolChoice: anthropicToolChoice(request.tool_choice?.type),
      maxOutputTokens: request.max_tokens,
      stream: request.stream === true,
      includeUsage: true,
      cacheable,
    },
  };
}

/**
 * The request in the order Anthropic reads it: each tool definition, each system block, then
 * each content block of each message, with its message's role (the same words from the user
 * and from the assistant are different prompts). A string is one text block.
 */
function cacheablePrompt(request: AnthropicRequest): CacheablePrompt {
  const system = typeof request.system === 'string' ? [{ type: 'text', text: request.system }] : (request.system ?? []);
  const blocks = request.messages.flatMap((message) =>
    (typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content).map((block) => ({
      role: message.role,
      ...block,
    })),
  );
  return {
    scheme: 'breakpoints',
    partition: request.model,
    units: [...(request.tools ?? []), ...system, ...blocks].map(promptUnit),
  };
}

function assistantMessage(blocks: readonly Block[], toolNames: Map<string, string>): Converted {
  const content: ({ type: 'text'; text: string } | LanguageModelV3ToolCallPart)[] = [];
  for (const block of blocks) {
    if (block.type === 'text' && block.text !== undefined) {
      if (block.text !== '') content.push({ type: 'text', text: block.text });
    } else if (block.type === 'tool_use' && block.id !== undefined && block.name !== undefined) {
      toolNames.set(block.id, block.name);
      const input = typeof block.input === 'string' ? block.input : JSON.stringify(block.input ?? {});
      content.push({ type: 'tool-call', toolCallId: block.id, toolName: block.name, input });
    } else if (block.type !== 'thinking' && block.type !== 'redacted_thinking') {
      return { ok: false, error: unsupported(block, 'text and tool_use') };
    }
  }
  return { ok: true, messages: [{ role: 'assistant', content }] };
}

/** A user turn: its tool results become one tool message, its text a user message after it. */
/**
 * One user turn of Anthropic's as the messages it stands for, in order: each run of tool_result
 * blocks one tool message, each text block one user message. Clients fold consecutive user and
 * tool messages into one turn (Anthropic's roles must alternate), so a turn of a tool result,
 * a notice and a handoff was three messages to the client and is three again here.
 */
function userMessages(blocks: readonly Block[], toolNames: Map<string, string>): Converted {
  const messages: LanguageModelV3Message[] = [];
  let results: LanguageModelV3ToolResultPart[] = [];
  const endResults = () => {
    if (results.length > 0) messages.push({ role: 'tool', content: results });
    results = [];
  };
  for (const block of blocks) {
    if (block.type === 'text' && block.text !== undefined) {
      endResults();
      messages.push({ role: 'user', content: [{ type: 'text', text: block.text }] });
    } else if (block.type === 'tool_result' && block.tool_use_id !== undefined) {
      const toolName = toolNames.get(block.tool_use_id);
      if (toolName === undefined) {
        return {
          ok: false,
          error: `tool_result block refers to tool_use id "${block.tool_use_id}", which no earlier assistant message contains.`,
        };
      }
      const value =
        typeof block.content === 'string'
          ? block.content
          : (block.content ?? []).map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join('');
      results.push({
        type: 'tool-result',
        toolCallId: block.tool_use_id,
        toolName,
        output: block.is_error === true ? { type: 'error-text', value } : { type: 'text', value },
      });
    } else {
      return { ok: false, error: unsupported(block, 'text and tool_result') };
    }
  }
  endResults();
  if (messages.length === 0) messages.push({ role: 'user', content: [{ type: 'text', text: '' }] });
  return { ok: true, messages };
}

function unsupported(block: Block, supported: string): string {
  return `content blocks of type "${block.type}" (or missing their required fields) are not supported here; send ${supported} blocks.`;
}

/** Anthropic's `tool_choice.type` in the SDK's terms: `any` is `required`; a named tool is left to the model. */
function anthropicToolChoice(type: string | undefined): ModelCall['toolChoice'] {
  if (type === 'none' || type === 'auto') return type;
  if (type === 'any') return 'required';
  return null;
}
