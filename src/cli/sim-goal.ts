import { parseModelSpec } from '../model/model-spec.js';
import { readBriefFile, readBriefText } from '../orchestrator/session/brief-file.js';
import type { GoalGiven } from '../orchestrator/session/run-session.js';
import { parseScenario } from '../sim/scenario/scenario.js';

/**
 * Why the simulated model cannot build the goal (a file, or `--goal`), or null when it can or no model
 * of the run is the sim. The sim writes only what a goal's colony-spec block lists (its test
 * command, index file and modules), so a free-form goal would fail in its first second; this
 * is said before anything is recorded. A goal that cannot be read is left to the run, which
 * says why.
 */
export function simGoalProblem(given: GoalGiven, modelSpecs: readonly string[], maxBytes: number): { readonly error: string; readonly hint: string } | null {
  if (!modelSpecs.some((spec) => parseModelSpec(spec)?.provider === 'sim')) return null;
  const goal = 'goalPath' in given ? readBriefFile(given.goalPath, 'goal', { maxBytes }) : readBriefText(given.goalText, 'goal', { maxBytes });
  if (!goal.ok) return null;
  const scenario = parseScenario(goal.body);
  if (scenario.ok) return null;
  return {
    error: `the simulated model (sim) builds only goals written for it, with a colony-spec block that lists the modules to write, and ${'goalPath' in given ? given.goalPath : 'the goal given with --goal'} has none it can build: ${scenario.error}`,
    hint: 'Try the sim on an example (colony run examples/toolbox/GOAL.md --repo <a copy of examples/toolbox>, or colony demo), serve it to another harness with colony sim-server, or give this goal to a real model with --model (openai:<model>, anthropic:<model>, openai-compatible:<model> with --base-url).',
  };
}
