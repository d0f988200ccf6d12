import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { newShortId } from '../../events/ids.js';
import type { RunSettings } from '../../events/run-settings.js';
import { errorMessage } from '../../errors/error-message.js';
import { goalsDirOf } from '../setup/state-directory.js';

/**
 * The goal: a file, or text given inline (`colony run --goal "..."`), which colony writes to a
 * file in the state directory (`goals/<run>.md`) and records as the run's goal file, so the
 * run reads the same on `colony resume`, and editing that file steers it like any goal file.
 */
export type GoalGiven = { readonly goalPath: string } | { readonly goalText: string };

/** The goal file a run records: the one given, or a new file in the state directory for an inline goal. */
export function recordedGoalOf(given: GoalGiven, stateDir: string): Pick<RunSettings, 'goalPath' | 'goalSource'> {
  if ('goalPath' in given) return { goalPath: given.goalPath, goalSource: 'file' };
  return { goalPath: join(goalsDirOf(stateDir), `${newShortId('goal')}.md`), goalSource: 'inline' };
}

/** Writes an inline goal to the file the run records it at; nothing to do for a goal file. */
export function keepInlineGoal(given: GoalGiven, path: string): { readonly ok: true } | { readonly ok: false; readonly error: string } {
  if (!('goalText' in given)) return { ok: true };
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, given.goalText, { flag: 'wx' });
  } catch (error) {
    return { ok: false, error: `colony could not keep the goal given with --goal in ${path}: ${errorMessage(error)}` };
  }
  return { ok: true };
}
