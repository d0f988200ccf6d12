import { fit } from './figures.js';
import type { TreeRow, TreeSort } from './tree-rows.js';

/**
 * The agent list's columns, one set of widths for its heading and every row so they line up:
 * the name (indentation, role, id and title), the state, what the agent is doing, then steps,
 * tokens and cost. Columns are one space apart and fill the width.
 */
export interface TreeColumns {
  readonly name: number;
  readonly state: number;
  readonly doing: number;
  readonly steps: number;
  readonly tokens: number;
  readonly cost: number;
}

/** `running`, `waiting`, `partial` and `blocked`, the longest states, are whole. */
const STATE_WIDTH = 7;
const STEPS_WIDTH = 5;
const TOKENS_WIDTH = 6;
const COST_WIDTH = 6;
const GAPS = 5;
/** The doing column takes a quarter of the width within these; it gives up more only for ids. */
const DOING_MIN = 12;
const DOING_MAX = 30;
const DOING_SQUEEZED = 6;
const NAME_MIN = 10;
/** The letters of a title the doing column makes room for, with its space and `…`. */
const TITLE_GLIMPSE = 7;

const ROLE_LABEL: Readonly<Record<string, string>> = { 'root-planner': 'root', 'sub-planner': 'planner', worker: 'worker' };

/**
 * The widths for `width` columns. `leadWidth` is what the longest shown row needs before its
 * title (indentation, caret, role and id): the doing column gives up columns to it and to a
 * glimpse of its title, so an id is cut only where nothing else is left to give.
 */
export function treeColumns(width: number, leadWidth: number): TreeColumns {
  const fixed = STATE_WIDTH + STEPS_WIDTH + TOKENS_WIDTH + COST_WIDTH + GAPS;
  let doing = Math.max(DOING_MIN, Math.min(DOING_MAX, Math.floor(width / 4)));
  const short = leadWidth + TITLE_GLIMPSE - (width - fixed - doing);
  if (short > 0) doing = Math.max(DOING_SQUEEZED, doing - short);
  const name = Math.max(NAME_MIN, width - fixed - doing);
  return { name, state: STATE_WIDTH, doing, steps: STEPS_WIDTH, tokens: TOKENS_WIDTH, cost: COST_WIDTH };
}

/** What a row shows before its title: indentation, the fold caret, role, id and what is folded. */
export function rowLead(row: TreeRow): { readonly indent: string; readonly rest: string } {
  const caret = row.children === 0 ? ' ' : row.collapsed ? '▸' : '▾';
  const hidden = row.collapsed ? ` (+${row.children})` : '';
  return { indent: '  '.repeat(row.depth), rest: `${caret} ${ROLE_LABEL[row.agent.role] ?? row.agent.role} ${row.agent.id}${hidden}` };
}

/** The columns a row needs before its title. */
export function leadWidth(row: TreeRow): number {
  const lead = rowLead(row);
  return lead.indent.length + lead.rest.length;
}

/**
 * The name cell, `width` characters: the id stays whole and the title gets what is left,
 * shortened with `…`; a tree too deep for the width gives up indentation before the id.
 */
export function nameCell(row: TreeRow, width: number): string {
  const { indent, rest } = rowLead(row);
  const shownIndent = indent.slice(0, Math.max(0, width - rest.length));
  const lead = `${shownIndent}${rest}`;
  if (lead.length >= width) return fit(lead, width);
  const room = width - lead.length - 1;
  return `${lead}${room > 1 && row.agent.title !== '' ? ` ${fit(row.agent.title, room)}` : ''}`.padEnd(width);
}

/** The heading's words for the name column: how the list is sorted, which rows are shown, what is hidden. */
export interface HeadingFacts {
  readonly sort: TreeSort;
  /** The first and last row shown, from 1, and how many there are; null when all fit. */
  readonly position: { readonly first: number; readonly last: number; readonly of: number } | null;
  /** Ended agents left out of the list. */
  readonly hiddenEnded: number;
}

/**
 * The heading over the rows, as wide as a row and with each column's name over its column. The
 * name column's words are the longest of a few wordings that fits.
 */
export function headingLine(columns: TreeColumns, facts: HeadingFacts): string {
  const { sort, position, hiddenEnded } = facts;
  const hidden = hiddenEnded > 0 ? `, ${hiddenEnded} ended hidden` : '';
  const wordings = [
    `agents (sorted by ${sort}${hidden})${position === null ? '' : ` ${position.first}-${position.last} of ${position.of}`}`,
    `agents by ${sort}${hidden}${position === null ? '' : ` ${position.first}-${position.last}/${position.of}`}`,
    `by ${sort}${hiddenEnded > 0 ? `, ${hiddenEnded} hidden` : ''}${position === null ? '' : ` ${position.first}-${position.last}/${position.of}`}`,
  ];
  const label = wordings.find((wording) => wording.length <= columns.name) ?? fit(wordings.at(-1) ?? '', columns.name);
  return [
    label.padEnd(columns.name),
    'state'.padEnd(columns.state),
    'doing'.padEnd(columns.doing),
    'steps'.padStart(columns.steps),
    'tokens'.padStart(columns.tokens),
    'cost'.padStart(columns.cost),
  ].join(' ');
}
