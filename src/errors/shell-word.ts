/** Characters a POSIX shell takes as part of a word as they are. */
const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * `text` as one word for a POSIX shell, for the commands colony prints for a person to paste:
 * as it is when it needs no quoting, else in single quotes (a single quote inside written as
 * `'\''`), so a path with spaces, quotes or `$` pastes as the one argument it is.
 */
export function shellWord(text: string): string {
  if (PLAIN.test(text)) return text;
  return `'${text.replaceAll("'", "'\\''")}'`;
}
