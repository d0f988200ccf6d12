/**
 * `{{NAME}}`, and anything else between double braces, so a misspelt placeholder in an
 * override is caught rather than sent to a model as it is.
 */
const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;

/** The placeholders a prompt holds, each once, in order of first appearance: `{{ROLE}}` gives `ROLE`. */
export function placeholdersIn(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((match) => (match[1] ?? '').trim()))];
}

/**
 * The prompt with every `{{NAME}}` of `values` replaced by its value, taken literally (a `$` in
 * a value is not a replacement pattern); placeholders not in `values` are left as they are.
 */
export function fillPlaceholders(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(PLACEHOLDER, (whole, name: string) => (Object.hasOwn(values, name.trim()) ? (values[name.trim()] ?? whole) : whole));
}

/** Names as a placeholder's value lists them: the first `max`, comma-separated, then how many more. */
export function listedNames(names: readonly string[], max: number): string {
  const shown = names.slice(0, max).join(', ');
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}
