import type { RedMain } from '../../green/main-health.js';
import { fillPlaceholders, type PromptSet } from '../../prompts/prompt-set.js';

/** Failure lines the notice lists; the rest are counted. */
const MAX_FAILURES_SHOWN = 10;

/**
 * The worker's standing notice that main fails already (the `main-failing` prompt), from the
 * green loop's last snapshot; empty while main passes, which withdraws it.
 */
export function mainFailingNotice(prompts: PromptSet, red: RedMain | null): string {
  if (red === null) return '';
  const shown = red.failures.slice(0, MAX_FAILURES_SHOWN).map((line) => `- ${line}`);
  const more = red.failures.length - shown.length;
  if (more > 0) shown.push(`- and ${more} more`);
  if (shown.length === 0) shown.push('- (the check failed without naming a failure)');
  return fillPlaceholders(prompts.text('main-failing'), { COMMAND: red.command, COMMIT: red.commit.slice(0, 12), FAILURES: shown.join('\n') });
}
