import { existingHiddenPaths } from './confinement-plan.js';
import type { ConfinementPlan } from './confinement-plan.js';

/** One mount of a command's view on top of the read-only root and the private directories. */
export type ViewMount =
  | { readonly kind: 'hide'; readonly path: string; readonly type: 'directory' | 'file' }
  | { readonly kind: 'bind'; readonly source: string; readonly target: string; readonly writable: boolean };

/**
 * The hidden paths, the workspace and the extra binds of a plan, in the order they are mounted:
 * a path before every path inside it, so the more specific one wins whatever it is. A workspace
 * inside a hidden directory is shown; a hidden directory inside a bound one stays hidden, as the
 * state directory does inside the git directory every command gets to read; a bind that covers
 * the workspace does not make it read-only. Paths of equal length keep the order hidden paths,
 * workspace, binds.
 */
export function viewMounts(plan: ConfinementPlan): ViewMount[] {
  const binds: ViewMount[] = [
    { kind: 'bind', source: plan.workspace, target: plan.workspace, writable: true },
    ...plan.binds.map((bind): ViewMount => ({ kind: 'bind', ...bind })),
  ];
  const shownAgain = [plan.workspace, ...plan.binds.map((bind) => bind.target)];
  const hidden = existingHiddenPaths(plan.hidden, plan.identity, shownAgain).map((entry): ViewMount => ({ kind: 'hide', path: entry.path, type: entry.kind }));
  const targetOf = (mount: ViewMount): string => (mount.kind === 'hide' ? mount.path : mount.target);
  return [...hidden, ...binds].sort((a, b) => targetOf(a).length - targetOf(b).length);
}
