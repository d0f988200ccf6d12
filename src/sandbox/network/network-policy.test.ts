import { describe, expect, it } from 'vitest';
import { canonicalHost, createHostMatcher, parseHostEntry, parseHostList, parseNetworkPolicy } from './network-policy.js';

function errorOf(result: { ok: true } | { ok: false; error: string }): string {
  return result.ok ? '(accepted)' : result.error;
}

describe('parseNetworkPolicy', () => {
  it('is no network when nothing is set, and with --network none', () => {
    expect(parseNetworkPolicy({})).toEqual({ ok: true, policy: { kind: 'none' } });
    expect(parseNetworkPolicy({ network: 'none' })).toEqual({ ok: true, policy: { kind: 'none' } });
  });

  it('shares the host network with --network allow', () => {
    expect(parseNetworkPolicy({ network: 'allow' })).toEqual({ ok: true, policy: { kind: 'all' } });
  });

  it('lists hosts from --network-allow, in one value or several', () => {
    expect(parseNetworkPolicy({ networkAllow: 'registry.npmjs.org, GitHub.com' })).toEqual({
      ok: true,
      policy: { kind: 'hosts', hosts: ['registry.npmjs.org', 'github.com'] },
    });
    expect(parseNetworkPolicy({ networkAllow: ['a.example', 'b.example,a.example'] })).toEqual({
      ok: true,
      policy: { kind: 'hosts', hosts: ['a.example', 'b.example'] },
    });
  });

  it('refuses an unknown --network value and says what to use', () => {
    const error = errorOf(parseNetworkPolicy({ network: 'all' }));
    expect(error).toContain('"none", "registries" or "allow"');
    expect(error).toContain('--network-allow');
  });

  it('gives --network registries the registries named, and what --network-allow adds', () => {
    expect(parseNetworkPolicy({ network: 'registries', registries: ['registry.npmjs.org', 'npm.example.test'] })).toEqual({
      ok: true,
      policy: { kind: 'hosts', hosts: ['registry.npmjs.org', 'npm.example.test'] },
    });
    expect(parseNetworkPolicy({ network: 'registries', registries: ['registry.npmjs.org'], networkAllow: 'github.com' })).toEqual({
      ok: true,
      policy: { kind: 'hosts', hosts: ['registry.npmjs.org', 'github.com'] },
    });
  });

  it('refuses --network-allow together with --network none or allow', () => {
    expect(errorOf(parseNetworkPolicy({ network: 'none', networkAllow: 'github.com' }))).toContain('contradict');
    expect(errorOf(parseNetworkPolicy({ network: 'allow', networkAllow: 'github.com' }))).toContain('would not narrow it');
  });

  it('refuses an empty list', () => {
    expect(errorOf(parseNetworkPolicy({ networkAllow: [] }))).toContain('at least one host');
  });
});

describe('parseHostList and parseHostEntry', () => {
  it('refuses an empty host between commas or at an end', () => {
    expect(errorOf(parseHostList('a.example,,b.example'))).toContain('empty host');
    expect(errorOf(parseHostList('a.example,'))).toContain('empty host');
    expect(errorOf(parseHostList(' '))).toContain('empty host');
  });

  it('refuses a URL and names the host to give instead', () => {
    expect(errorOf(parseHostEntry('https://github.com/colony'))).toBe(
      '--network-allow entry "https://github.com/colony" is a URL; give the host alone: github.com',
    );
    expect(errorOf(parseHostEntry('github.com/colony'))).toContain('give the host alone: github.com');
  });

  it('refuses a port, for names and addresses', () => {
    expect(errorOf(parseHostEntry('github.com:443'))).toContain('has a port; an allowed host is reachable on every port, so give the host alone: github.com');
    expect(errorOf(parseHostEntry('[::1]:8080'))).toContain('give the host alone: ::1');
    expect(errorOf(parseHostEntry('127.0.0.1:80'))).toContain('give the host alone: 127.0.0.1');
  });

  it('refuses a user name, a space and characters no host has', () => {
    expect(errorOf(parseHostEntry('me@github.com'))).toContain('give the host alone: github.com');
    expect(errorOf(parseHostEntry('github com'))).toContain('separate hosts with commas');
    expect(errorOf(parseHostEntry('git!hub.com'))).toContain('is not a host name or IP address');
    expect(errorOf(parseHostEntry('-github.com'))).toContain('is not a host name or IP address');
    expect(errorOf(parseHostEntry('a..example'))).toContain('is not a host name or IP address');
    expect(errorOf(parseHostEntry('fe80::1%eth0'))).toContain('is not a host name or IP address');
  });

  it('takes *.domain as a wildcard and refuses every other wildcard', () => {
    expect(parseHostEntry('*.GitHubUserContent.com')).toEqual({ ok: true, host: '*.githubusercontent.com' });
    expect(errorOf(parseHostEntry('*'))).toContain('*.example.com');
    expect(errorOf(parseHostEntry('*.com'))).toContain('whole top-level domain');
    expect(errorOf(parseHostEntry('api.*.com'))).toContain('is the only form');
    expect(errorOf(parseHostEntry('*github.com'))).toContain('is the only form');
    expect(errorOf(parseHostEntry('*.127.0.0.1'))).toContain('wildcard over a domain');
  });

  it('spells every entry canonically', () => {
    expect(parseHostEntry('Registry.NPMJS.org.')).toEqual({ ok: true, host: 'registry.npmjs.org' });
    expect(parseHostEntry('münchen.de')).toEqual({ ok: true, host: 'xn--mnchen-3ya.de' });
    expect(parseHostEntry('127.1')).toEqual({ ok: true, host: '127.0.0.1' });
    expect(parseHostEntry('[0:0::1]')).toEqual({ ok: true, host: '::1' });
    expect(parseHostEntry('localhost')).toEqual({ ok: true, host: 'localhost' });
  });
});

describe('canonicalHost', () => {
  it('gives IPv4 in any spelling as dotted decimal', () => {
    for (const spelling of ['127.0.0.1', '0x7f.1', '127.1', '2130706433']) expect(canonicalHost(spelling)).toBe('127.0.0.1');
  });

  it('is null for what is not a host', () => {
    for (const text of ['', 'a b', 'a:b', 'a/b', 'x'.repeat(64) + '.example', '1.2.3.4.5']) expect(canonicalHost(text)).toBeNull();
  });
});

describe('createHostMatcher', () => {
  const matches = createHostMatcher(['github.com', '*.npmjs.org', '127.0.0.1', '::1']);

  it('matches names exactly, whatever their case or trailing dot', () => {
    expect(matches('github.com')).toBe(true);
    expect(matches('GITHUB.com.')).toBe(true);
    expect(matches('api.github.com')).toBe(false);
    expect(matches('github.com.evil.example')).toBe(false);
    expect(matches('evilgithub.com')).toBe(false);
  });

  it('matches a wildcard for subdomains at any depth, not for the domain itself', () => {
    expect(matches('registry.npmjs.org')).toBe(true);
    expect(matches('a.b.npmjs.org')).toBe(true);
    expect(matches('npmjs.org')).toBe(false);
    expect(matches('evilnpmjs.org')).toBe(false);
  });

  it('lets an IP address through only when it is listed, in any spelling', () => {
    expect(matches('127.0.0.1')).toBe(true);
    expect(matches('0x7f.0.0.1')).toBe(true);
    expect(matches('[::1]')).toBe(true);
    expect(matches('127.0.0.2')).toBe(false);
    expect(createHostMatcher(['localhost'])('127.0.0.1')).toBe(false);
  });

  it('never matches what is not a host', () => {
    expect(matches('')).toBe(false);
    expect(matches('github.com:443')).toBe(false);
  });

  it('throws on an entry the parser refuses', () => {
    expect(() => createHostMatcher(['https://github.com'])).toThrow('is a URL');
  });
});
