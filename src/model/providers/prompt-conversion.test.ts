import type { LanguageModelV3Prompt } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../chat-model.js';
import type { Message } from '../messages.js';
import { functionToolsToToolSpecs, messagesToPrompt, promptToMessages, toolSpecsToFunctionTools } from './prompt-conversion.js';

const CONVERSATION: readonly Message[] = [
  { role: 'system', content: 'You are a worker.' },
  { role: 'user', content: 'Fix the test.' },
  {
    role: 'assistant',
    text: 'Looking.',
    toolCalls: [
      { id: 'c1', name: 'read_file', input: '{"path":"a.ts"}' },
      { id: 'c2', name: 'shell', input: '{"command":"npm test"}' },
    ],
  },
  { role: 'tool', callId: 'c1', toolName: 'read_file', content: 'export const a = 1;', isError: false },
  { role: 'tool', callId: 'c2', toolName: 'shell', content: 'exit 1', isError: true },
  { role: 'assistant', text: 'Fixed.', toolCalls: [] },
];

describe('messagesToPrompt', () => {
  it('writes every message in the provider contract format', () => {
    expect(messagesToPrompt(CONVERSATION)).toEqual([
      { role: 'system', content: 'You are a worker.' },
      { role: 'user', content: [{ type: 'text', text: 'Fix the test.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'read_file', input: '{"path":"a.ts"}' },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'shell', input: '{"command":"npm test"}' },
        ],
      },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'read_file', output: { type: 'text', value: 'export const a = 1;' } }],
      },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'c2', toolName: 'shell', output: { type: 'error-text', value: 'exit 1' } }],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Fixed.' }] },
    ]);
  });

  it('leaves out empty assistant text and sends malformed arguments as an empty object', () => {
    const prompt = messagesToPrompt([
      { role: 'assistant', text: '', toolCalls: [{ id: 'c9', name: 'edit', input: '{"path": "a.ts"' }] },
      { role: 'assistant', text: '', toolCalls: [{ id: 'c10', name: 'edit', input: '[1, 2]' }] },
    ]);
    expect(prompt).toEqual([
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c9', toolName: 'edit', input: '{}' }] },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c10', toolName: 'edit', input: '{}' }] },
    ]);
  });
});

describe('promptToMessages', () => {
  it('is the inverse of messagesToPrompt for well-formed conversations', () => {
    expect(promptToMessages(messagesToPrompt(CONVERSATION))).toEqual(CONVERSATION);
  });

  it('reads what other clients send: joined text, object inputs, JSON and denied outputs', () => {
    const prompt: LanguageModelV3Prompt = [
      { role: 'user', content: [{ type: 'text', text: 'one ' }, { type: 'text', text: 'two' }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'thinking' },
          { type: 'tool-call', toolCallId: 'x', toolName: 'list', input: { dir: '.' } },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'x', toolName: 'list', output: { type: 'json', value: ['a', 'b'] } },
          { type: 'tool-result', toolCallId: 'y', toolName: 'rm', output: { type: 'execution-denied', reason: 'not allowed' } },
          { type: 'tool-result', toolCallId: 'z', toolName: 'ls', output: { type: 'content', value: [{ type: 'text', text: 'f' }] } },
        ],
      },
    ];
    expect(promptToMessages(prompt)).toEqual([
      { role: 'user', content: 'one two' },
      { role: 'assistant', text: '', toolCalls: [{ id: 'x', name: 'list', input: '{"dir":"."}' }] },
      { role: 'tool', callId: 'x', toolName: 'list', content: '["a","b"]', isError: false },
      { role: 'tool', callId: 'y', toolName: 'rm', content: 'not allowed', isError: true },
      { role: 'tool', callId: 'z', toolName: 'ls', content: 'f', isError: false },
    ]);
  });
});

describe('tool specs', () => {
  it('convert to function tools and back', () => {
    const tools: ToolSpec[] = [
      { name: 'read_file', description: 'Reads a file.', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
    ];
    const functionTools = toolSpecsToFunctionTools(tools);
    expect(functionTools).toEqual([
      { type: 'function', name: 'read_file', description: 'Reads a file.', inputSchema: tools[0]?.inputSchema },
    ]);
    expect(functionToolsToToolSpecs(functionTools)).toEqual(tools);
  });
});
