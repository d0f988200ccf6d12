/** Words colony's messages start a remedy with, after a colon: "…serves it: pass --base-url URL". */
const REMEDY_AFTER_COLON = /^(.+?): ((?:pass|set|write|run|make|check|create|install|use|give|choose|remove|drop)\b.*)$/;

/**
 * A message of colony's own that says what is wrong and then what to do ("X does not exist.
 * Pass --repo …", "…serves it: pass --base-url URL"), split into the two for a doctor line:
 * the problem, and the rest as the fix. A message with no remedy keeps `fallbackFix`.
 */
export function problemAndFix(message: string, fallbackFix: string): { problem: string; fix: string } {
  const text = message.replace(/\s+/g, ' ').trim();
  const split = /^(.+?\.) ((?:[A-Z]|`).*)$/.exec(text) ?? REMEDY_AFTER_COLON.exec(text);
  if (split === null) return { problem: text.replace(/\.$/, ''), fix: fallbackFix };
  return { problem: (split[1] ?? '').replace(/\.$/, ''), fix: (split[2] ?? '').replace(/\.$/, '') };
}
