import { dirname } from 'node:path';
import type { RecordedEvent } from '../events/event-types.js';
import type { CommandContext } from './command-context.js';

/**
 * The line a run earns on stderr when the repository overrides colony's prompts: which ones
 * and from where. Null for any other event, and when nothing is overridden.
 */
export function promptOverrideNotice(event: RecordedEvent): string | null {
  if (event.type !== 'prompts.loaded' || event.data.overridden.length === 0) return null;
  const { overridden } = event.data;
  const dir = dirname(overridden[0]?.path ?? '');
  const files = overridden.map((override) => `${override.name}.md`).join(', ');
  return `colony: ${overridden.length} prompt${overridden.length === 1 ? '' : 's'} overridden by ${dir}: ${files}\n`;
}

/**
 * What a run tells `onEvent`: the override notice, printed whatever `--quiet` or `--json` say
 * (what the agents are told changed, and a person must not miss that), then the progress
 * printer, if any, for every other event.
 */
export function announcingPromptOverrides(ctx: CommandContext, progress: ((event: RecordedEvent) => void) | undefined): (event: RecordedEvent) => void {
  return (event) => {
    if (event.type === 'prompts.loaded') {
      const notice = promptOverrideNotice(event);
      if (notice !== null) ctx.stderr(notice);
      return;
    }
    progress?.(event);
  };
}
