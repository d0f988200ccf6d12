import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Tool } from './tool.js';
import { TOOL_NAMES } from '../protocol/tool-names.js';

const description = readFileSync(new URL('./descriptions/write-scratchpad.md', import.meta.url), 'utf8');

const scratchpadParameters = z.object({
  content: z.string().trim().min(1).describe('The whole new scratchpad.'),
});

/** The longest scratchpad colony keeps: it goes into every request, so it must stay small. */
export const MAX_SCRATCHPAD_CHARS = 8_000;

/**
 * `write_scratchpad`: replaces the agent's scratchpad whole, never appends. `write` keeps it
 * (and records it); the agent loop shows the latest one in every request. A scratchpad over
 * MAX_SCRATCHPAD_CHARS is refused with a request to shorten it, not cut silently.
 */
export function createWriteScratchpadTool(write: (content: string) => void): Tool<z.infer<typeof scratchpadParameters>> {
  return {
    name: TOOL_NAMES.writeScratchpad,
    description,
    parameters: scratchpadParameters,
    execute: async (input) => {
      const content = input.content.trim();
      if (content.length > MAX_SCRATCHPAD_CHARS) {
        return {
          ok: false,
          error: `The scratchpad is ${content.length} characters; the limit is ${MAX_SCRATCHPAD_CHARS}. Keep only what you need to carry on (the plan, what is done, what is open, decisions) and write it again.`,
        };
      }
      write(content);
      return { ok: true, output: `Scratchpad replaced (${content.length} characters). It is shown to you before every answer.` };
    },
  };
}
