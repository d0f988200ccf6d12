import { handoffLists, type Handoff } from '../../events/handoff.js';
import type { AgentTranscript, TranscriptEntry } from '../../observe/replay/agent-transcript.js';
import { clockTime } from './figures.js';

/** The tabs of an agent's page. */
export type DetailTab = 'transcript' | 'scratchpad' | 'handoffs' | 'diff';
export const DETAIL_TABS: readonly DetailTab[] = ['transcript', 'scratchpad', 'handoffs', 'diff'];

/** How many lines of one text (a tool's output, a model's words) the transcript shows before saying how many it left out. */
const TEXT_LINES = 40;

/** The lines of a tab, wrapped to `width`. */
export function detailLines(tab: DetailTab, transcript: AgentTranscript, diff: string | null, width: number): string[] {
  switch (tab) {
    case 'transcript':
      return transcript.entries.flatMap((entry) => wrappedEntry(entry, width));
    case 'scratchpad':
      return wrapAll(transcript.scratchpad === null ? ['(no scratchpad written yet)'] : transcript.scratchpad.split('\n'), width);
    case 'handoffs':
      return wrapAll(transcript.handoffs.length === 0 ? ['(no handoff yet)'] : transcript.handoffs.flatMap(handoffLines), width);
    case 'diff':
      return wrapAll(diff === null ? ['(reading the diff…)'] : diff.split('\n'), width);
  }
}

/**
 * Each entry's lines as last wrapped, kept while the entry lives: a transcript read again (once
 * a second while a live agent's page is open) shares its entries with the one before, so only
 * the new and changed ones are laid out again.
 */
const wrapped = new WeakMap<TranscriptEntry, { readonly width: number; readonly lines: readonly string[] }>();

function wrappedEntry(entry: TranscriptEntry, width: number): readonly string[] {
  const known = wrapped.get(entry);
  if (known?.width === width) return known.lines;
  const lines = wrapAll(entryLines(entry), width);
  wrapped.set(entry, { width, lines });
  return lines;
}

function entryLines(entry: TranscriptEntry): string[] {
  const time = clockTime(entry.ts);
  switch (entry.kind) {
    case 'task':
      return [`${time} task:`, ...indent(entry.text)];
    case 'model': {
      const calls = entry.toolCalls === 0 ? '' : `, ${entry.toolCalls} tool call(s)`;
      return [`${time} model, step ${entry.step} (${entry.tokens} tokens${calls}):`, ...indent(entry.text === '' ? '(no text)' : entry.text)];
    }
    case 'tool': {
      const outcome = entry.ok === null ? 'running' : `${entry.ok ? 'ok' : 'FAILED'} in ${((entry.durationMs ?? 0) / 1000).toFixed(1)}s`;
      return [`${time} ▶ ${entry.name} ${outcome}: ${entry.input}`, ...(entry.output === null ? [] : indent(entry.output, '  │ '))];
    }
    case 'message':
      return [`${time} message:`, ...indent(entry.text)];
    case 'note':
      return [`${time} ${entry.text}`];
  }
}

function handoffLines(handoff: Handoff): string[] {
  const lines = [`${handoff.status}: ${handoff.summary}`];
  const lists: [string, readonly string[]][] = [['commits', handoff.commits], ...handoffLists(handoff)];
  for (const [name, items] of lists) {
    if (items.length === 0) continue;
    lines.push(`${name}:`, ...items.map((item) => `  - ${item}`));
  }
  if (handoff.evidence !== '') lines.push('evidence:', ...indent(handoff.evidence));
  lines.push('');
  return lines;
}

/** A text's first lines, indented, with a line saying how many more there were. */
function indent(text: string, prefix = '    '): string[] {
  const lines = text.replace(/\s+$/, '').split('\n');
  const shown = lines.slice(0, TEXT_LINES).map((line) => `${prefix}${line}`);
  if (lines.length > TEXT_LINES) shown.push(`${prefix}… ${lines.length - TEXT_LINES} more line(s)`);
  return shown;
}

function wrapAll(lines: readonly string[], width: number): string[] {
  const wrapped: string[] = [];
  const room = Math.max(10, width);
  for (const line of lines) {
    const clean = line.replace(/\t/g, '  ').replace(/\r/g, '');
    if (clean.length <= room) {
      wrapped.push(clean);
      continue;
    }
    for (let start = 0; start < clean.length; start += room) wrapped.push(clean.slice(start, start + room));
  }
  return wrapped;
}
