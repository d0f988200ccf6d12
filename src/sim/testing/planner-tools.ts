import type { Message } from '../../model/messages.js';
import { CUT_OFF_OPENING, GREEN_FAILURES_HEADING, GREEN_FIXUP_OPENING, RELEASE_REFUSED_OPENING } from '../../protocol/message-openings.js';
import type { SimAnswer } from '../sim-answer.js';
import type { SimOptions } from '../sim-options.js';
import { DEFAULT_SIM_OPTIONS } from '../sim-options.js';
import { simPlannerTurn } from '../planner/planner-policy.js';
import { cutAtOutputLimit } from '../sim-output-limit.js';

/**
 * A small fake of the planner tools for the sim planner's tests: it assigns task ids and
 * answers each call with the first line the planner protocol gives
 * (docs/architecture/planner.md), and formats handoffs and user messages as colony delivers
 * them. What a child task does is up to the test.
 */

export const PLANNER_TOOL_NAMES = [
  'create_task',
  'delegate',
  'write_scratchpad',
  'andon',
  'finish',
  'read_file',
  'list_dir',
  'search',
  'run_command',
] as const;

export interface FakeTask {
  readonly id: string;
  readonly kind: 'worker' | 'planner';
  readonly title: string;
  readonly brief: string;
  readonly scope: string | null;
  readonly retryOf: string | null;
  /** The acceptance commands a create_task gave; empty for a delegated task. */
  readonly acceptance: readonly string[];
}

export interface FakeHandoff {
  readonly status: 'done' | 'partial' | 'blocked' | 'failed';
  readonly summary: string;
  readonly synthetic?: boolean;
  /** colony's acceptance lines, as they follow `acceptance: ` (the headline, then detail lines). */
  readonly acceptance?: string;
  readonly evidence?: string;
  readonly notes?: readonly string[];
  readonly concerns?: readonly string[];
}

export type Arguments = Record<string, unknown>;

/** A handoff as it arrives in the planner's conversation. */
export function formatHandoffMessage(task: Pick<FakeTask, 'id' | 'title'>, handoff: FakeHandoff): string {
  const lines = [`Handoff from task ${task.id} "${task.title}"`, `status: ${handoff.status}`];
  if (handoff.acceptance !== undefined) lines.push(`acceptance: ${handoff.acceptance}`);
  if (handoff.synthetic === true) lines.push('written by colony: the agent ended without a handoff');
  lines.push(`summary: ${handoff.summary}`, handoff.status === 'done' ? 'commits: 1a2b3c4' : 'commits: none');
  if (handoff.evidence !== undefined) lines.push(`evidence: ${handoff.evidence}`);
  const lists: [string, readonly string[] | undefined][] = [
    ['notes', handoff.notes],
    ['concerns', handoff.concerns],
  ];
  for (const [name, items] of lists) {
    if (items !== undefined && items.length > 0) lines.push(`${name}:`, ...items.map((item) => `- ${item}`));
  }
  return lines.join('\n');
}

/** The brief a sub-planner starts from: its scope line, a blank line, its parent's brief. */
export function subPlannerBrief(scope: string, brief: string): string {
  return `Your scope: \`${scope}\` (you own this slice of the repository).\n\n${brief}`;
}

export interface PlannerSessionOptions {
  readonly brief: string;
  readonly options?: SimOptions;
  readonly toolNames?: readonly string[];
  /** Answers run_command; the default says the tests pass. */
  readonly runCommand?: (command: string) => string;
  /** Gives each new task its id; shared by the planners of one tree so ids stay unique. */
  readonly newTaskId?: () => string;
  /** Refuses a finish call when it returns an error text, as colony refuses a done finish while main's release check fails. */
  readonly refuseFinish?: (args: Arguments) => string | null;
  /** Refuses a create_task or delegate call when it returns an error text, as colony refuses a failed task's brief published again; none refused when absent. */
  readonly refusePublish?: (name: string, args: Arguments) => string | null;
  /** Refuses create_task and delegate calls beyond `bound` in one answer with `refusal`, as colony does; no bound when absent. */
  readonly publishBound?: { readonly bound: number; readonly refusal: string };
  /**
   * The most output tokens an answer may have: a longer one stops there, as the sim stops at
   * a request's limit, and the call it stopped in is answered as colony answers it.
   */
  readonly maxOutputTokens?: number;
}

export interface PlannerSession {
  readonly messages: Message[];
  readonly tasks: FakeTask[];
  /** Arguments of every accepted finish call, in order. */
  readonly finishes: Arguments[];
  /** Arguments of every finish call refuseFinish refused, in order. */
  readonly refusedFinishes: Arguments[];
  readonly commands: string[];
  /** One model call: appends the sim's answer and the results of its tool calls. */
  turn(): SimAnswer;
  handOff(taskId: string, handoff: FakeHandoff): void;
  tell(text: string): void;
  /** A fix-up message from colony's green loop about these failure lines, blaming `taskId`. */
  fixUp(failures: readonly string[], taskId: string): void;
  /** Tasks without a handoff yet. */
  openTasks(): FakeTask[];
}

export const PASSING_TESTS = 'exit code: 0\n\nTAP version 13\n# tests 12\n# pass 12\n# fail 0';

/** How colony answers a call an answer was cut off in (src/agent/cut-off-call.md). */
export const CUT_OFF_ANSWER = `error: ${CUT_OFF_OPENING} your answer stopped at its output limit in the middle of this call, so its arguments are incomplete and it did not run.`;

export function createPlannerSession(setup: PlannerSessionOptions): PlannerSession {
  const messages: Message[] = [
    { role: 'system', content: 'You are a planner. Split the goal into tasks, wait for their handoffs, check main and finish.' },
    { role: 'user', content: setup.brief },
  ];
  const tasks: FakeTask[] = [];
  const handedOff = new Set<string>();
  const finishes: Arguments[] = [];
  const refusedFinishes: Arguments[] = [];
  const commands: string[] = [];
  let count = 0;
  const newTaskId = setup.newTaskId ?? ((): string => `task_${++count}`);

  let publishedInTurn = 0;
  function execute(name: string, args: Arguments): { content: string; isError: boolean } {
    const refusal = name === 'finish' ? (setup.refuseFinish?.(args) ?? null) : null;
    if (refusal !== null) {
      refusedFinishes.push(args);
      return { content: refusal, isError: true };
    }
    const publishRefusal = name === 'create_task' || name === 'delegate' ? (setup.refusePublish?.(name, args) ?? null) : null;
    if (publishRefusal !== null) return { content: `error: ${publishRefusal}`, isError: true };
    if ((name === 'create_task' || name === 'delegate') && setup.publishBound !== undefined) {
      if (publishedInTurn >= setup.publishBound.bound) return { content: `error: ${setup.publishBound.refusal}`, isError: true };
      publishedInTurn += 1;
    }
    return { content: answer(name, args), isError: false };
  }

  function answer(name: string, args: Arguments): string {
    const text = (key: string): string => String(args[key]);
    switch (name) {
      case 'create_task': {
        const retryOf = typeof args.retry_of === 'string' ? args.retry_of : null;
        const acceptance = Array.isArray(args.acceptance) ? args.acceptance.map(String) : [];
        const task: FakeTask = { id: newTaskId(), kind: 'worker', title: text('title'), brief: text('brief'), scope: null, retryOf, acceptance };
        tasks.push(task);
        return `Created task ${task.id}: ${task.title}`;
      }
      case 'delegate': {
        const task: FakeTask = { id: newTaskId(), kind: 'planner', title: text('title'), brief: text('brief'), scope: text('scope'), retryOf: null, acceptance: [] };
        tasks.push(task);
        return `Delegated task ${task.id} (scope ${task.scope}): ${task.title}`;
      }
      case 'write_scratchpad':
        return `Scratchpad saved (${text('content').length} characters).`;
      case 'finish':
        finishes.push(args);
        return `Finished: ${typeof args.status === 'string' ? args.status : 'done'}. Waiting for nothing else.`;
      case 'run_command':
        commands.push(text('command'));
        return (setup.runCommand ?? (() => PASSING_TESTS))(text('command'));
      default:
        return `${name} is not part of this fake.`;
    }
  }

  return {
    messages,
    tasks,
    finishes,
    refusedFinishes,
    commands,
    turn() {
      const options = setup.options ?? DEFAULT_SIM_OPTIONS;
      const whole = simPlannerTurn(messages, setup.toolNames ?? PLANNER_TOOL_NAMES, options);
      const { answer } = cutAtOutputLimit(whole, setup.maxOutputTokens, options.tokens);
      publishedInTurn = 0;
      messages.push({ role: 'assistant', text: answer.text, toolCalls: answer.toolCalls });
      answer.toolCalls.forEach((call, index) => {
        const cutShort = call.input !== whole.toolCalls[index]?.input;
        const { content, isError } = cutShort ? { content: CUT_OFF_ANSWER, isError: true } : execute(call.name, JSON.parse(call.input) as Arguments);
        messages.push({ role: 'tool', callId: call.id, toolName: call.name, content, isError });
      });
      return answer;
    },
    handOff(taskId, handoff) {
      const task = tasks.find((each) => each.id === taskId) ?? { id: taskId, title: 'a task from elsewhere' };
      handedOff.add(taskId);
      messages.push({ role: 'user', content: formatHandoffMessage(task, handoff) });
    },
    tell(text) {
      messages.push({ role: 'user', content: `Message from the user:\n${text}` });
    },
    fixUp(failures, taskId) {
      messages.push({ role: 'user', content: greenFixupMessage(failures, taskId) });
    },
    openTasks() {
      return tasks.filter((task) => !handedOff.has(task.id));
    },
  };
}

/** A fix-up message as colony's green loop fills its template (src/orchestrator/prompts/green-fixup.md). */
export function greenFixupMessage(failures: readonly string[], taskId: string): string {
  return [
    `${GREEN_FIXUP_OPENING} colony's green check of main fails, and the failure came with a commit of a task you own.`,
    '',
    'Command: `node --test`',
    'First bad commit: 0badc0ffee12 Add the module',
    `Task: ${taskId} "Build a module"`,
    'Snapshot: main at 5eed5eed5eed fails; the last commit that passed is 600d600d600d.',
    '',
    GREEN_FAILURES_HEADING,
    ...failures,
    '',
    'Output tail:',
    ...failures,
    '# fail 1',
    '',
    'That task has ended, so nobody is fixing this yet. Publish a task that makes the check pass on main again. ' +
      'colony sends this once per failure; the green branch moves again when a snapshot passes.',
  ].join('\n');
}

/** The error a done finish gets while main's release snapshot fails (src/orchestrator/prompts/release-refused.md). */
export function releaseRefusedError(failures: readonly string[]): string {
  return [
    `${RELEASE_REFUSED_OPENING} the release snapshot of main failed.`,
    '',
    'Command: `node --test`',
    'Snapshot: main at 5eed5eed5eed fails; the last commit that passed is 600d600d600d.',
    'First bad commit: 0badc0ffee12 (task task_1)',
    '',
    GREEN_FAILURES_HEADING,
    ...failures,
    '',
    'Output tail:',
    ...failures,
    '',
    'Publish tasks that make the check pass on main, then finish again. ' +
      'A run ends done only on a passing snapshot; finishing with another status ends the run as that status.',
  ].join('\n');
}

/** The function a generated module exports: its path in camel case (`src/text/t0.js` → `srcTextT0`). */
export function functionNameFor(path: string): string {
  const words = path.replace(/\.js$/, '').split(/[^A-Za-z0-9]+/).filter((word) => word.length > 0);
  return words.map((word, index) => (index === 0 ? word : `${word[0]?.toUpperCase() ?? ''}${word.slice(1)}`)).join('');
}

/** A goal with one small module per path, each exporting one function with one case. */
export function goalWith(paths: readonly string[], uses: Readonly<Record<string, readonly string[]>> = {}): string {
  const modules = paths.map((path) => ({
    path,
    exports: [{ name: functionNameFor(path), params: ['value'], body: 'return value;', cases: [{ args: [1], returns: 1 }] }],
    ...(uses[path] === undefined ? {} : { uses: uses[path] }),
  }));
  const spec = { project: { test: 'node --test', index: 'src/index.js' }, modules };
  return ['# A generated goal', '', 'Build every module below.', '', '```colony-spec', JSON.stringify(spec, null, 2), '```'].join('\n');
}

/** The name of the one test a generated module has, as node:test reports it. */
export function testNameFor(path: string): string {
  return `${functionNameFor(path)}(1) returns 1`;
}

/** A failing run of the tests on main, in TAP, with these test names failing. */
export function failingTests(names: readonly string[]): string {
  const lines = names.map((name, index) => `not ok ${index + 1} - ${name}`);
  return ['exit code: 1', '', 'TAP version 13', ...lines, `# tests ${names.length + 5}`, '# pass 5', `# fail ${names.length}`].join('\n');
}

export function range(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}${index}.js`);
}
