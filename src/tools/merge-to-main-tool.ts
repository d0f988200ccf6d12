import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { EventBody } from '../events/event-types.js';
import { mergeToMain } from '../workspace/merge/merge-to-main.js';
import type { MergeCheck, MergeIntent } from '../workspace/merge/merge-to-main.js';
import type { Repository } from '../workspace/git/repository.js';
import type { Workspace } from '../workspace/workspace.js';
import type { ConflictSettler } from '../workspace/git/rebase-state.js';
import type { Tool } from './tool.js';
import { TOOL_NAMES } from '../protocol/tool-names.js';

const parameters = z.object({
  message: z.string().min(1).describe('The commit message for your change: what it does and why, in one line or a few.'),
});

export interface MergeToolOptions {
  readonly record: (event: EventBody) => void;
  /** Told the new commit of main each time this workspace's work lands; awaited before the tool answers. */
  readonly onLanded: (commit: string) => Promise<void> | void;
  /** The project's merge check, run on the replayed work before main moves (`--merge-check`); none when absent. */
  readonly check?: MergeCheck;
  /**
   * Told each compare-and-swap of main just before it is attempted; records it durably so a
   * restart can tell whether the merge landed (see `MergeToMainOptions.onIntent`). If it throws,
   * main is not moved and the tool answers that the merge failed.
   */
  readonly onIntent?: (intent: MergeIntent) => void;
  /** Settles the conflicts no agent should untangle (see `MergeToMainOptions.settleConflicts`); none when absent. */
  readonly settleConflicts?: ConflictSettler;
  /**
   * Questions colony asks once before a merge lands (notes about the work, tests the task does
   * not own), in order: the first whose check answers with a refusal refuses the merge with it,
   * and main is not moved; a later merge is not refused by it again. Absent: none.
   */
  readonly refuseOnce?: readonly MergeRefusal[];
}

/** One of `MergeToolOptions.refuseOnce`. */
export interface MergeRefusal {
  /** The refusal to answer this merge with, or null when it has nothing to object to. */
  readonly check: () => Promise<string | null>;
  /** It refused a merge of this worker's before a restart: it refuses none again. */
  readonly refusedBefore: boolean;
}

/** `merge_to_main`: commits the workspace's changes and lands them on main (see workspace/merge-to-main). */
export function createMergeToMainTool(
  repo: Repository,
  workspace: Workspace,
  options: MergeToolOptions,
): Tool<z.infer<typeof parameters>> {
  const refusals = (options.refuseOnce ?? []).map((refusal) => ({ check: refusal.check, spent: refusal.refusedBefore }));
  return {
    name: TOOL_NAMES.mergeToMain,
    description: readFileSync(new URL('./descriptions/merge-to-main.md', import.meta.url), 'utf8').trim(),
    parameters,
    async execute(input) {
      for (const refusal of refusals) {
        if (refusal.spent) continue;
        const refused = await refusal.check();
        if (refused === null) continue;
        refusal.spent = true;
        return { ok: false, error: refused };
      }
      const outcome = await mergeToMain(repo, workspace, {
        message: input.message,
        record: options.record,
        ...(options.check === undefined ? {} : { check: options.check }),
        ...(options.onIntent === undefined ? {} : { onIntent: options.onIntent }),
        ...(options.settleConflicts === undefined ? {} : { settleConflicts: options.settleConflicts }),
      });
      switch (outcome.status) {
        case 'landed':
          await options.onLanded(outcome.commit);
          return {
            ok: true,
            output:
              `merged into ${repo.mainBranch} as ${outcome.commit.slice(0, 12)} (${outcome.attempts} attempt(s)); ` +
              `files: ${outcome.files.join(', ') || '(none)'}` +
              settledText(outcome.autoResolved, repo.mainBranch) +
              (outcome.workspaceBehind === undefined
                ? ''
                : `\nYour workspace still shows the files as they were before ${repo.mainBranch}'s latest changes (${outcome.workspaceBehind}); your next merge_to_main brings it up to date, so go on working (git's own metadata is read-only in your sandbox: do not try to move it yourself).`),
          };
        case 'conflicted':
          return {
            ok: false,
            error: [
              `merge conflict: ${repo.mainBranch} changed the same lines as your change.`,
              `conflicts in files: ${outcome.files.join(', ')}`,
              ...(outcome.unsettled === undefined ? [] : [`colony could not settle package.json and its lockfile itself: ${outcome.unsettled}.`]),
              `Each file now holds conflict markers: the part above ======= is ${repo.mainBranch}'s, the part below is yours ` +
                '(a file one side deleted has no markers: it is as the other side left it; keep it, or delete it). ' +
                'Edit each file to keep what both sides meant, remove every marker line, then call merge_to_main again.',
            ].join('\n'),
          };
        case 'check-failed':
          return {
            ok: false,
            error: [
              `merge check failed: your work, replayed onto the latest ${repo.mainBranch}, does not pass the project's merge check, so ${repo.mainBranch} was not moved.`,
              `Your workspace now holds that replayed work (${repo.mainBranch}'s latest changes and yours). Fix it there, then call merge_to_main again.`,
              'check output:',
              outcome.output,
            ].join('\n'),
          };
        case 'nothing-to-merge':
          return { ok: false, error: `nothing to merge: ${outcome.reason}` };
        case 'failed':
          return { ok: false, error: `merge failed: ${outcome.error}` };
      }
    },
  };
}

/** What colony settled itself, said to the worker after a landing: lines both sides appended, package manifests. */
function settledText(files: readonly string[], mainBranch: string): string {
  const manifests = files.filter((file) => MANIFEST_FILES.has(file));
  const appended = files.filter((file) => !MANIFEST_FILES.has(file));
  const lines = [
    ...(appended.length === 0 ? [] : [`colony merged your appended lines after ${mainBranch}'s in ${appended.join(', ')}, where both sides only added lines at the end.`]),
    ...(manifests.length === 0
      ? []
      : [`colony merged your package.json with ${mainBranch}'s, key by key${relockedBy(manifests)} (${manifests.join(', ')}); your commands get the dependencies they name once your workspace shows them.`]),
  ];
  return lines.map((line) => `\n${line}`).join('');
}

/** The package manager of each lockfile colony writes again in a merge. */
const LOCKFILE_MANAGERS: Readonly<Record<string, string>> = { 'package-lock.json': 'npm', 'npm-shrinkwrap.json': 'npm', 'pnpm-lock.yaml': 'pnpm', 'yarn.lock': 'yarn' };

const MANIFEST_FILES: ReadonlySet<string> = new Set(['package.json', ...Object.keys(LOCKFILE_MANAGERS)]);

function relockedBy(files: readonly string[]): string {
  const manager = files.map((file) => LOCKFILE_MANAGERS[file]).find((name) => name !== undefined);
  return manager === undefined ? '' : `, and had ${manager} write the lockfile again for both`;
}
