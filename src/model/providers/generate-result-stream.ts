import type { LanguageModelV3GenerateResult, LanguageModelV3StreamPart } from '@ai-sdk/provider';

/** The same answer as stream parts: text in small deltas, each tool call's input in pieces. */
export function streamOfResult(result: LanguageModelV3GenerateResult): ReadableStream<LanguageModelV3StreamPart> {
  const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  for (const part of result.content) {
    if (part.type === 'text') {
      parts.push({ type: 'text-start', id: 'text-0' });
      for (const piece of pieces(part.text)) parts.push({ type: 'text-delta', id: 'text-0', delta: piece });
      parts.push({ type: 'text-end', id: 'text-0' });
    } else if (part.type === 'tool-call') {
      parts.push({ type: 'tool-input-start', id: part.toolCallId, toolName: part.toolName });
      for (const piece of pieces(part.input)) parts.push({ type: 'tool-input-delta', id: part.toolCallId, delta: piece });
      parts.push({ type: 'tool-input-end', id: part.toolCallId }, part);
    }
  }
  parts.push({ type: 'finish', finishReason: result.finishReason, usage: result.usage });
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

function pieces(text: string): string[] {
  const characters = Array.from(text);
  const result: string[] = [];
  for (let start = 0; start < characters.length; start += 8) result.push(characters.slice(start, start + 8).join(''));
  return result;
}
