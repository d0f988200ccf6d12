import type { JSONSchema7, LanguageModelV3Message } from '@ai-sdk/provider';
import { z } from 'zod';
import { promptUnit } from './prompt-cache.js';
import type { CacheablePrompt } from './prompt-cache.js';
import type { ParsedRequest } from './wire-format.js';

const contentSchema = z.union([
  z.string(),
  z.null(),
  z.array(z.looseObject({ type: z.string(), text: z.string().optional() })),
]);

const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function').optional(),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: contentSchema }),
  z.object({ role: z.literal('developer'), content: contentSchema }),
  z.object({ role: z.literal('user'), content: contentSchema }),
  z.object({
    role: z.literal('assistant'),
    content: contentSchema.optional(),
    tool_calls: z.array(toolCallSchema).nullish(),
  }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string(), content: contentSchema }),
]);

const requestSchema = z.object({
  model: z.string(),
  messages: z.array(messageSchema).min(1),
  tools: z
    .array(
      z.object({
        type: z.literal('function'),
        function: z.object({
          name: z.string(),
          description: z.string().optional(),
          parameters: z.record(z.string(), z.unknown()).optional(),
        }),
      }),
    )
    .optional(),
  tool_choice: z.union([z.enum(['auto', 'none', 'required']), z.looseObject({ type: z.string() })]).optional(),
  max_tokens: z.number().int().positive().nullish(),
  max_completion_tokens: z.number().int().positive().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  /** Requests with the same key (or none) share cached prompt prefixes. */
  prompt_cache_key: z.string().nullish(),
});

type OpenAIRequest = z.infer<typeof requestSchema>;

type OpenAIContent = z.infer<typeof contentSchema> | undefined;

/** An OpenAI chat-completions request body as a model call, or what is wrong with it. */
export function parseOpenAIChatRequest(body: unknown): ParsedRequest {
  const parsed = requestSchema.safeParse(body);
  if (!parsed.success) return { ok: false, error: `Invalid request body: ${z.prettifyError(parsed.error)}` };
  const request = parsed.data;
  const prompt: LanguageModelV3Message[] = [];
  const toolNames = new Map<string, string>();
  for (const [index, message] of request.messages.entries()) {
    const text = contentText(message.content);
    if (!text.ok) return { ok: false, error: `messages[${index}]: ${text.error}` };
    switch (message.role) {
      case 'system':
      case 'developer':
        prompt.push({ role: 'system', content: text.value });
        break;
      case 'user':
        prompt.push({ role: 'user', content: [{ type: 'text', text: text.value }] });
        break;
      case 'assistant': {
        const calls = message.tool_calls ?? [];
        for (const call of calls) toolNames.set(call.id, call.function.name);
        prompt.push({
          role: 'assistant',
          content: [
            ...(text.value === '' ? [] : [{ type: 'text' as const, text: text.value }]),
            ...calls.map((call) => ({
              type: 'tool-call' as const,
              toolCallId: call.id,
              toolName: call.function.name,
              input: call.function.arguments,
            })),
          ],
        });
        break;
      }
      case 'tool': {
        const toolName = toolNames.get(message.tool_call_id);
        if (toolName === undefined) {
          return {
            ok: false,
            error:
              `messages[${index}]: a message with role 'tool' must answer a tool call of an earlier assistant ` +
              `message, and no tool call has id "${message.tool_call_id}".`,
          };
        }
        prompt.push({
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: message.tool_call_id,
              toolName,
              output: { type: 'text', value: text.value },
            },
          ],
        });
        break;
      }
    }
  }
  return {
    ok: true,
    call: {
      model: request.model,
      prompt,
      tools: (request.tools ?? []).map((tool) => ({
        type: 'function',
        name: tool.function.name,
        ...(tool.function.description === undefined ? {} : { description: tool.function.description }),
        inputSchema: (tool.function.parameters ?? { type: 'object', properties: {} }) as JSONSchema7,
      })),
      // A named function is a choice this server does not take apart: the model chooses.
      toolChoice: typeof request.tool_choice === 'string' ? request.tool_choice : null,
      maxOutputTokens: request.max_completion_tokens ?? request.max_tokens ?? undefined,
      stream: request.stream === true,
      includeUsage: request.stream_options?.include_usage === true,
      cacheable: cacheablePrompt(request),
    },
  };
}

/** The request as OpenAI's automatic prompt cache reads it: each tool definition, then each message. */
function cacheablePrompt(request: OpenAIRequest): CacheablePrompt {
  return {
    scheme: 'automatic',
    partition: JSON.stringify([request.model, request.prompt_cache_key ?? null]),
    units: [...(request.tools ?? []), ...request.messages].map(promptUnit),
  };
}

function contentText(content: OpenAIContent): { ok: true; value: string } | { ok: false; error: string } {
  if (content === undefined || content === null) return { ok: true, value: '' };
  if (typeof content === 'string') return { ok: true, value: content };
  let value = '';
  for (const part of content) {
    if (part.type !== 'text' || part.text === undefined) {
      return { ok: false, error: `content parts of type "${part.type}" are not supported; send text.` };
    }
    value += part.text;
  }
  return { ok: true, value };
}
