/**
 * A message of colony's own that says what is wrong and then what to do ("X does not exist.
 * Pass --repo …"), split into the two for a doctor line: the first sentence, and the rest as
 * the fix. A message of one sentence keeps `fallbackFix`.
 */
export function problemAndFix(message: string, fallbackFix: string): { problem: string; fix: string } {
  const text = message.replace(/\s+/g, ' ').trim();
  const split = /^(.+?\.) ((?:[A-Z]|`).*)$/.exec(text);
  if (split === null) return { problem: text.replace(/\.$/, ''), fix: fallbackFix };
  return { problem: (split[1] ?? '').replace(/\.$/, ''), fix: (split[2] ?? '').replace(/\.$/, '') };
}
