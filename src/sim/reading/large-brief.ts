import { LARGE_BRIEF_FILE, LARGE_BRIEF_NOTICE } from '../../protocol/message-openings.js';

/** What colony's notice says of a brief too large to show whole (`orchestrator/roles/planner/large-brief.md`). */
export interface LargeBriefNotice {
  /** The file the whole brief is, as the planner's read_file names it. */
  readonly path: string;
  readonly characters: number;
  readonly lines: number;
}

const SIZE = new RegExp(`${LARGE_BRIEF_NOTICE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} ([\\d,]+) characters in ([\\d,]+) lines`);
const FILE = /is the file `([^`]+)`/;

/** The notice in a planner's first message; null when its brief came whole. */
export function readLargeBriefNotice(firstUser: string): LargeBriefNotice | null {
  const size = SIZE.exec(firstUser);
  if (size === null) return null;
  const number = (text: string | undefined): number => Number((text ?? '').replace(/,/g, ''));
  return { path: FILE.exec(firstUser.slice(size.index))?.[1] ?? LARGE_BRIEF_FILE, characters: number(size[1]), lines: number(size[2]) };
}
