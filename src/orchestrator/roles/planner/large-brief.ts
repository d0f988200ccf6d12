import { mkdir, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fillPlaceholders } from '../../prompts/prompt-set.js';
import type { ReadFileInput } from '../../../tools/read-file-tool.js';
import type { SearchInput } from '../../../tools/search-tool.js';
import type { Tool } from '../../../tools/tool.js';
import { LARGE_BRIEF_FILE } from '../../../protocol/message-openings.js';

const NOTICE = readFileSync(new URL('./large-brief.md', import.meta.url), 'utf8').trim();

/**
 * A brief that would take more than this share of the planner's context window is not put in
 * its conversation whole. A planner copies what it reads into the briefs it writes, and keeps
 * handoffs, its scratchpad and the system prompt besides; with a quarter of the window in its
 * first message, it still has room to work before colony compacts.
 */
export const LARGE_BRIEF_SHARE = 0.25;

/** The opening shown of a large brief: its first lines, at most this share of the window. */
const OPENING_SHARE = 1 / 16;

/** Characters per token, as colony estimates a conversation's size (`agent/context-size.ts`). */
const CHARACTERS_PER_TOKEN = 4;

/** What a planner's first message is, and where its whole brief is when that message holds only the opening. */
export interface PlannerBrief {
  readonly message: string;
  /** The brief as a file the planner reads in parts; null when the message holds it whole. */
  readonly file: { readonly dir: string; readonly name: string } | null;
}

/**
 * The planner's first message for its task's brief. A brief within LARGE_BRIEF_SHARE of the
 * window is the message as it is. A larger one is written to `<dir>/brief.md` and the message
 * is its opening (the first lines, the heading among them, within OPENING_SHARE of the window)
 * and a notice saying how large it is and that the whole brief is the file `LARGE_BRIEF_FILE`,
 * which the planner's read_file and search reach (`withBriefFile`).
 */
export async function plannerBrief(body: string, options: { readonly windowTokens: number; readonly dir: string; readonly what: 'goal' | 'brief' }): Promise<PlannerBrief> {
  const tokens = Math.ceil(body.length / CHARACTERS_PER_TOKEN);
  if (tokens <= options.windowTokens * LARGE_BRIEF_SHARE) return { message: body, file: null };
  await mkdir(options.dir, { recursive: true });
  await writeFile(join(options.dir, 'brief.md'), body);
  const lines = body.split('\n');
  const budget = options.windowTokens * OPENING_SHARE * CHARACTERS_PER_TOKEN;
  let shown = 0;
  let size = 0;
  // At least the first line (a heading, or a sub-planner's scope), whatever its length.
  while (shown < lines.length && (shown === 0 || size + (lines[shown]?.length ?? 0) + 1 <= budget)) {
    size += (lines[shown]?.length ?? 0) + 1;
    shown += 1;
  }
  const notice = fillPlaceholders(NOTICE, {
    WHAT: options.what,
    SHOWN: String(shown),
    CHARACTERS: body.length.toLocaleString('en-US'),
    LINES: lines.length.toLocaleString('en-US'),
    TOKENS: tokens.toLocaleString('en-US'),
    WINDOW: options.windowTokens.toLocaleString('en-US'),
    PATH: LARGE_BRIEF_FILE,
  });
  const opening = lines.slice(0, shown).join('\n');
  return { message: `${opening}\n\n${notice}`, file: { dir: options.dir, name: 'brief.md' } };
}

/**
 * The planner's read_file and search, reaching its brief's file too: a call naming
 * LARGE_BRIEF_FILE goes to the brief (kept beside the planner's view of main, not in it, so
 * following main never touches it), any other to the view as before.
 */
export function withBriefFile(
  tools: { readonly readFile: Tool<ReadFileInput>; readonly search: Tool<SearchInput> },
  brief: { readonly readFile: Tool<ReadFileInput>; readonly search: Tool<SearchInput>; readonly name: string },
): [Tool<ReadFileInput>, Tool<SearchInput>] {
  const named = (path: string | undefined): boolean => path !== undefined && path.replace(/^\.\//, '') === LARGE_BRIEF_FILE;
  return [
    { ...tools.readFile, execute: (input, context) => (named(input.path) ? brief.readFile.execute({ ...input, path: brief.name }, context) : tools.readFile.execute(input, context)) },
    {
      ...tools.search,
      execute: async (input, context) => {
        if (!named(input.path)) return tools.search.execute(input, context);
        const found = await brief.search.execute({ ...input, path: brief.name }, context);
        // Matches name the file as the planner does.
        return found.ok ? { ...found, output: found.output.split('\n').map((line) => (line.startsWith(`${brief.name}:`) ? `${LARGE_BRIEF_FILE}${line.slice(brief.name.length)}` : line)).join('\n') } : found;
      },
    },
  ];
}
