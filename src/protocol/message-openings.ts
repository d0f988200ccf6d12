/**
 * The first words of the messages colony sends an agent, each telling one kind of message from
 * another: colony's code writes them, its prompts (`orchestrator/prompts/*.md`, and the agent
 * loop's own in `agent/`) begin with them, and a model that acts on them (the sim among them)
 * recognises them from here. The prompts are text a repository may override, so a test holds
 * each to its opening.
 */

/** The prompt that asks for a summary of the conversation so far (`compaction.md`). */
export const COMPACTION_REQUEST_OPENING = 'Context limit: summarise';

/** The user message that stands in for the turns a summary replaced. */
export const SUMMARY_OPENING = 'Summary of the conversation so far';

/** The reminder to rewrite the scratchpad (`scratchpad-reminder.md`). */
export const SCRATCHPAD_REMINDER_OPENING = 'Scratchpad reminder:';

/** The reminder to check the work against its goal (`reflect-reminder.md`). */
export const REFLECTION_REMINDER_OPENING = 'Reflection reminder:';

/**
 * The answer to the last tool call of an answer the provider cut off at its output limit, in
 * the middle of that call (`agent/cut-off-call.md`).
 */
export const CUT_OFF_OPENING = 'Cut off at the output limit:';

/** The answer to a worker's `done` that came without evidence (`evidence-reminder.md`). */
export const EVIDENCE_FIRST_OPENING = 'Evidence first:';

/** A fix-up message: main is red, and this planner owns the commit that broke it (`green-fixup.md`). */
export const GREEN_FIXUP_OPENING = 'Main is red:';

/** A worker's notice that main's last green check failed before its work landed (`main-failing.md`). */
export const MAIN_FAILING_OPENING = 'Main is failing already:';

/** The heading of what colony adds under a worker's brief in its first message (`worker-task.md`). */
export const WORKER_TASK_CONTEXT_HEADING = 'About this task, from colony:';

/** A worker's `done` refused while its workspace holds work that is not on main (`unlanded-done.md`). */
export const NOT_LANDED_OPENING = 'Not landed:';

/** A worker's merge refused once because it adds files named like notes about its work (`stray-notes.md`). */
export const STRAY_NOTES_OPENING = 'Not merged:';

/**
 * A worker's merge refused once because it changes or deletes tests main has outside the task's
 * paths (`others-tests.md`). Not `Not merged:`, so that a reader tells it from the notes refusal.
 */
export const OTHERS_TESTS_OPENING = 'Not merged (tests outside your task):';

/** A create_task or delegate refused because the answer already published as many as one answer may. */
export const PUBLISH_BOUND_OPENING = 'Not published now:';

/** A create_task refused once because its brief is that of a task of the planner's that ended without its work done, published again without `retry_of`. */
export const REPUBLISHED_OPENING = 'Not published:';

/** A retry refused because its chain already holds as many attempts as colony takes. */
export const RETRY_CAP_OPENING = 'Not retried:';

/** A root planner's done refused while the release check fails (`release-refused.md`, `release-unchecked.md`). */
export const RELEASE_REFUSED_OPENING = 'The run cannot finish as done yet:';

/**
 * How the line under a failed acceptance command ends when every one of its failures had
 * already failed on main before the worker's merge (`roles/planner/handoff-message.ts`).
 */
export const NOTHING_NEW_FAILING = '; none is new.';

/** The heading the failure lines stand under in a fix-up message and a refused finish, one per line. */
export const GREEN_FAILURES_HEADING = 'Failing on main:';

/** The last call an agent gets once its budget is used up (`budget-final-planner.md`, `budget-final-worker.md`). */
export const BUDGET_USED_UP_HEADER = 'Budget used up:';

/** A message a person left for a planner (`colony say`). */
export const USER_MESSAGE_HEADER = 'Message from the user:';

/** A handoff as it reaches the planner that asked: `Handoff from task <id> "<title>"`, then its fields. */
export const HANDOFF_OPENING = 'Handoff from task';

/**
 * Where a planner reads its brief when the brief is too large to put in its conversation whole
 * (`orchestrator/roles/planner/large-brief.md`): its first message is the opening and a notice
 * naming this file, which its read_file and search reach.
 */
export const LARGE_BRIEF_FILE = '.colony/brief.md';

/** The words of that notice that say the brief goes on in the file. */
export const LARGE_BRIEF_NOTICE = 'it is too large to show here whole,';
