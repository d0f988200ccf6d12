import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { redactUrlCredentials } from '../../events/secret-redaction.js';

/** Keys whose values are credentials or run something to get them. */
const SECRET_KEY = /^(extraheader|helper|password|token|accesstoken|cookiefile|sslkey|sslcert|sslkeypassword|sslcertpasswordprotected|askpass|sshcommand)$/i;
/** Sections that pull in other files, which could hold anything. */
const INCLUDE_SECTION = /^\[\s*include(if)?\b/i;

/**
 * The repository's git config as commands in the sandbox may read it: the same settings (so
 * git works in a workspace), without credentials a user or a CI system left there (a token in a
 * remote's URL, an `http.extraheader`, credential helpers, includes of other files). Written
 * into the run's state and shown over the repository's own `config` inside the sandbox.
 * Returns the file, or null when the repository has no config to show.
 */
export async function writeSandboxGitConfig(gitDir: string, stateDir: string): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(join(gitDir, 'config'), 'utf8');
  } catch {
    return null;
  }
  const dir = join(stateDir, 'sandbox');
  await mkdir(dir, { recursive: true });
  const path = join(dir, 'git-config');
  await writeFile(path, withoutCredentials(text), { mode: 0o644 });
  return path;
}

/** `text`, a git config file, without credential lines and include sections, and with URLs' userinfo redacted. */
export function withoutCredentials(text: string): string {
  const kept: string[] = [];
  let inInclude = false;
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.startsWith('[')) inInclude = INCLUDE_SECTION.test(trimmed);
    if (inInclude) continue;
    const key = /^([A-Za-z][\w-]*)\s*(=|$)/.exec(trimmed)?.[1];
    if (key !== undefined && SECRET_KEY.test(key)) continue;
    kept.push(redactUrlCredentials(line));
  }
  return kept.join('\n');
}
