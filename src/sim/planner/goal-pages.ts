import type { Scenario } from '../scenario/scenario.js';
import type { SpecModule } from '../../spec/colony-spec.js';

/**
 * How the sim reads a goal too large for its first message, from the parts its read_file calls
 * returned: the colony-spec's project, and its modules one by one with the line each starts
 * on. It reads a spec laid out as colony's own goals are (`specBlock`, or JSON indented
 * in the usual way): `"project"` and `"modules": [` on lines of their own, each module
 * starting on a line of its own. A page read from a line ends wherever its lines end; a
 * module cut by the page's end is read again from its first line by the next page.
 */

/** Where the reading stands: before the spec block, in it, in its module list, or past it. */
export type GoalPhase = 'before-spec' | 'spec' | 'modules' | 'done';

export interface GoalCursor {
  /** The next line to read, 1-based. */
  readonly line: number;
  readonly phase: GoalPhase;
}

export const GOAL_START: GoalCursor = { line: 1, phase: 'before-spec' };

export interface PageModule {
  readonly line: number;
  readonly module: SpecModule;
}

export interface ScannedPage {
  readonly project: Scenario['project'] | null;
  readonly modules: readonly PageModule[];
  /** Where the next page starts: after this one, or at the first line of what it cut. */
  readonly next: GoalCursor;
}

/**
 * Reads one page: `text` holds the goal's lines from `from.line` to `lastLine`. Text that does
 * not parse as the layout expects is passed over, as a reader skims what it cannot use.
 */
export function scanPage(text: string, from: GoalCursor, lastLine: number): ScannedPage {
  const lines = text.split('\n').slice(0, Math.max(0, lastLine - from.line + 1));
  let phase = from.phase;
  let project: Scenario['project'] | null = null;
  const modules: PageModule[] = [];
  let open: { start: number; phase: GoalPhase; lines: string[] } | null = null;
  for (const [index, line] of lines.entries()) {
    const number = from.line + index;
    const trimmed = line.trim();
    if (open !== null) {
      open.lines.push(line);
    } else if (phase === 'before-spec') {
      if (trimmed.startsWith('```colony-spec')) phase = 'spec';
      continue;
    } else if (trimmed.startsWith('```') || (phase === 'modules' && trimmed.startsWith(']'))) {
      phase = 'done';
      break;
    } else if (phase === 'spec' && /^"modules"\s*:\s*\[\s*$/.test(trimmed)) {
      phase = 'modules';
      continue;
    } else if ((phase === 'spec' && trimmed.startsWith('"project"')) || (phase === 'modules' && trimmed.startsWith('{'))) {
      open = { start: number, phase, lines: [line] };
    } else {
      continue;
    }
    if (!/[}\]],?$/.test(trimmed)) continue;
    const joined = open.lines.join('\n').trim().replace(/,$/, '');
    const value = parseJson(open.phase === 'spec' ? `{${joined}}` : joined);
    if (value === null) continue;
    if (open.phase === 'spec') project = projectOf(value) ?? project;
    else {
      const module = moduleOf(value);
      if (module !== null) modules.push({ line: open.start, module });
    }
    open = null;
  }
  const next: GoalCursor = open === null ? { line: lastLine + 1, phase } : { line: open.start, phase: open.phase };
  return { project, modules, next };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function projectOf(value: unknown): Scenario['project'] | null {
  const project = isRecord(value) ? value['project'] : undefined;
  if (!isRecord(project) || typeof project['test'] !== 'string' || typeof project['index'] !== 'string') return null;
  return { test: project['test'], index: project['index'] };
}

/** A module as far as the sim checks it here; the sub-planner it is delegated to checks the rest. */
function moduleOf(value: unknown): SpecModule | null {
  if (!isRecord(value) || typeof value['path'] !== 'string' || !Array.isArray(value['exports'])) return null;
  return value as SpecModule;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
