import type { MergeRefusal } from '../../../tools/merge-to-main-tool.js';
import { addedNoteFiles } from '../../../workspace/merge/note-files.js';
import { changedTestsOutside } from '../../../workspace/merge/others-tests.js';
import type { Workspace } from '../../../workspace/workspace.js';
import { OTHERS_TESTS_OPENING, STRAY_NOTES_OPENING } from '../../../protocol/message-openings.js';
import { TOOL_NAMES } from '../../../protocol/tool-names.js';
import { normalizeRepoPath, pathsMeet } from '../../in-flight/path-overlap.js';
import { fillPlaceholders, listedNames, type PromptSet } from '../../prompts/prompt-set.js';
import type { PriorAgent } from '../../resume/prior-agents.js';
import type { Repository } from '../../../workspace/git/repository.js';

/**
 * What colony asks once before a worker's merge lands (decisions 0055 and 0056): whether it adds
 * notes about the work (`stray-notes`), then whether it edits tests its task does not own
 * (`others-tests`). Each refuses one merge at most, across restarts too: a worker whose merge it
 * refused in an earlier life is not refused by it again.
 */
export function mergeRefusals(
  repo: Repository,
  workspace: Workspace,
  prompts: PromptSet,
  declaredPaths: readonly string[],
  prior: PriorAgent | null,
): MergeRefusal[] {
  const owned = declaredPaths.flatMap((path) => normalizeRepoPath(path) ?? []);
  const notes: MergeRefusal = {
    check: async () => {
      const files = await addedNoteFiles(repo, workspace);
      return files.length === 0 ? null : fillPlaceholders(prompts.text('stray-notes'), { FILES: listedNames(files, FILES_NAMED) });
    },
    refusedBefore: refusedBefore(prior, STRAY_NOTES_OPENING),
  };
  if (owned.length === 0) return [notes];
  // Without declared paths colony cannot say which tests a task owns: only a task with paths is asked.
  const tests: MergeRefusal = {
    check: async () => {
      const files = await changedTestsOutside(repo, workspace, (file) => owned.some((path) => pathsMeet(path, file)));
      if (files.length === 0) return null;
      return fillPlaceholders(prompts.text('others-tests'), { FILES: listedNames(files, FILES_NAMED), PATHS: listedNames(owned, FILES_NAMED), MAIN: repo.mainBranch });
    },
    refusedBefore: refusedBefore(prior, OTHERS_TESTS_OPENING),
  };
  return [notes, tests];
}

/** Files a refusal names before it says how many more. */
export const FILES_NAMED = 5;

/** Whether a merge of the worker's last life was refused with a refusal that opens with `opening`. */
function refusedBefore(prior: PriorAgent | null, opening: string): boolean {
  return prior?.events.some((event) => event.type === 'tool.ended' && event.data.name === TOOL_NAMES.mergeToMain && event.data.output.startsWith(`error: ${opening}`)) ?? false;
}
