import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

/**
 * What a sandboxed command may reach on the network: nothing (the default), everything the
 * host reaches (`--network allow`), or only the listed hosts, through the run's egress proxy
 * (`--network-allow registry.npmjs.org,github.com`, or `--network registries`: the package
 * registries the project's configuration names).
 *
 * A host entry is a name (`github.com`, matched exactly), a wildcard (`*.github.com`: every
 * subdomain at any depth, but not `github.com` itself), or an IP address (`127.0.0.1`, `::1`),
 * which is the only way an IP literal is let through. Entries are stored in one canonical
 * spelling: lower case, IDN names in punycode, IPv4 in dotted decimal, IPv6 compressed and
 * without brackets, no trailing dot.
 */
export type NetworkPolicy = { kind: 'none' } | { kind: 'all' } | { kind: 'hosts'; hosts: readonly string[] };

/** The user's setting as the command line gives it: `--network none|allow|registries`, `--network-allow a,b` (repeatable). */
export interface NetworkSetting {
  readonly network?: string;
  readonly networkAllow?: string | readonly string[];
  /** The package registries' hosts `--network registries` stands for (read from the project's configuration). */
  readonly registries?: readonly string[];
}

export type NetworkPolicyResult = { ok: true; policy: NetworkPolicy } | { ok: false; error: string };
export type HostListResult = { ok: true; hosts: string[] } | { ok: false; error: string };
export type HostEntryResult = { ok: true; host: string } | { ok: false; error: string };

const MAX_NAME_LENGTH = 253;
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;
const EXAMPLE = 'as in --network-allow registry.npmjs.org,github.com';

export function parseNetworkPolicy(setting: NetworkSetting): NetworkPolicyResult {
  const network = setting.network?.trim();
  const listed = setting.networkAllow;
  if (network !== undefined && network !== 'none' && network !== 'allow' && network !== 'registries') {
    return { ok: false, error: `--network takes "none", "registries" or "allow", not "${network}"; to reach only some hosts use --network-allow, ${EXAMPLE}` };
  }
  if (network === 'registries') {
    // The registries, and whatever --network-allow adds to them, through the proxy.
    const hosts = parseHostList([...(setting.registries ?? []), ...(listed === undefined ? [] : typeof listed === 'string' ? [listed] : listed)]);
    if (!hosts.ok) return hosts;
    return { ok: true, policy: { kind: 'hosts', hosts: hosts.hosts } };
  }
  if (listed === undefined) return { ok: true, policy: network === 'allow' ? { kind: 'all' } : { kind: 'none' } };
  if (network === 'none') return { ok: false, error: '--network none and --network-allow contradict each other; give one of them' };
  if (network === 'allow') {
    return { ok: false, error: '--network allow already shares the whole host network, so --network-allow would not narrow it; give one of them' };
  }
  const hosts = parseHostList(listed);
  if (!hosts.ok) return hosts;
  return { ok: true, policy: { kind: 'hosts', hosts: hosts.hosts } };
}

/** Comma-separated entries, from one or several `--network-allow` values; repeats are dropped. */
export function parseHostList(listed: string | readonly string[]): HostListResult {
  const texts = typeof listed === 'string' ? [listed] : listed;
  const hosts: string[] = [];
  for (const text of texts) {
    for (const entry of text.split(',')) {
      const parsed = parseHostEntry(entry);
      if (!parsed.ok) return parsed;
      if (!hosts.includes(parsed.host)) hosts.push(parsed.host);
    }
  }
  if (hosts.length === 0) return { ok: false, error: `--network-allow needs at least one host, ${EXAMPLE}` };
  return { ok: true, hosts };
}

/** One allow-list entry, with an error that says how to write it instead. */
export function parseHostEntry(entry: string): HostEntryResult {
  const text = entry.trim();
  const refuse = (why: string): HostEntryResult => ({ ok: false, error: `--network-allow entry "${text}" ${why}` });
  if (text === '') return { ok: false, error: `--network-allow has an empty host (two commas in a row, or one at an end); ${EXAMPLE}` };
  if (/\s/.test(text)) return refuse('contains a space; separate hosts with commas');
  if (text.includes('://') || /[/?#]/.test(text)) {
    const host = hostOfUrl(text);
    return refuse(`is a URL; give the host alone${host === null ? `, ${EXAMPLE}` : `: ${host}`}`);
  }
  if (text.includes('@')) return refuse(`holds a user name; give the host alone: ${text.slice(text.lastIndexOf('@') + 1)}`);
  const withPort = /^\[(.+)\]:\d*$/.exec(text) ?? (isIP(text) === 6 ? null : /^([^:]*):\d*$/.exec(text));
  if (withPort !== null) {
    return refuse(`has a port; an allowed host is reachable on every port, so give the host alone: ${withPort[1]}`);
  }
  if (text.startsWith('*.')) {
    const suffix = canonicalHost(text.slice(2));
    if (suffix === null || isIP(suffix) !== 0) return refuse('is not a wildcard over a domain; write it as *.example.com');
    if (!suffix.includes('.')) return refuse(`would allow a whole top-level domain; name a domain below it, as in *.example.${suffix}`);
    return { ok: true, host: `*.${suffix}` };
  }
  if (text.includes('*')) return refuse('has a wildcard that is not a whole first label; *.example.com (every subdomain of example.com) is the only form');
  const host = canonicalHost(text);
  if (host === null) return refuse(`is not a host name or IP address; ${EXAMPLE}`);
  return { ok: true, host };
}

/**
 * The canonical spelling of a host name or IP address (see NetworkPolicy), or null when it is
 * neither. The proxy puts every requested host through this before matching, so `0x7f.1`,
 * `127.1` and `2130706433` are all `127.0.0.1` and `GitHub.COM.` is `github.com`.
 */
export function canonicalHost(host: string): string | null {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  if (isIP(bare) === 6) return canonicalAddress6(bare);
  // URL syntax (`a/b` would become `a`) is refused before the IDNA mapping can read it as such.
  if (/[^-.\w\u0080-\uffff]/.test(bare)) return null;
  let ascii = domainToASCII(bare);
  if (ascii.endsWith('.')) ascii = ascii.slice(0, -1);
  if (ascii === '' || ascii.length > MAX_NAME_LENGTH) return null;
  if (isIP(ascii) === 4) return ascii;
  return ascii.split('.').every((label) => LABEL.test(label)) ? ascii : null;
}

/**
 * A matcher over canonical entries (as parseHostEntry returns them). It takes a host in any
 * spelling and answers whether the allow-list lets it through: exact names and addresses,
 * and wildcards for names below their domain. An IP address matches only itself.
 * Throws on an entry the parser would have refused: that is a programmer error.
 */
export function createHostMatcher(hosts: readonly string[]): (host: string) => boolean {
  const exact = new Set<string>();
  const suffixes: string[] = [];
  for (const entry of hosts) {
    const parsed = parseHostEntry(entry);
    if (!parsed.ok) throw new Error(parsed.error);
    if (parsed.host.startsWith('*.')) suffixes.push(parsed.host.slice(1));
    else exact.add(parsed.host);
  }
  return (host) => {
    const canonical = canonicalHost(host);
    if (canonical === null) return false;
    if (exact.has(canonical)) return true;
    if (isIP(canonical) !== 0) return false;
    return suffixes.some((suffix) => canonical.endsWith(suffix));
  };
}

function canonicalAddress6(address: string): string | null {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    // A zone index (`fe80::1%eth0`) is an address only on this machine; it is not a host.
    return null;
  }
}

function hostOfUrl(text: string): string | null {
  try {
    const host = new URL(text.includes('://') ? text : `http://${text}`).hostname;
    return host === '' ? null : canonicalHost(host);
  } catch {
    return null;
  }
}
