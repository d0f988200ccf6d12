import { spawn, spawnSync, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/store/testing/postgres-cluster.js';

/**
 * Why the documented origin cannot be served here (nginx or fcgiwrap missing), or null. Never
 * a reason under CI (COLONY_REQUIRE_SANDBOX_TESTS=1), which installs them.
 */
export const GIT_HTTP_ORIGIN_UNAVAILABLE: string | null =
  process.env.COLONY_REQUIRE_SANDBOX_TESTS === '1' || ['nginx', 'fcgiwrap'].every((program) => spawnSync('sh', ['-c', `command -v ${program}`]).status === 0)
    ? null
    : 'nginx and fcgiwrap (Debian packages of the same names) are not installed';

/** The nginx configuration docs/deploy.md tells operators to use, which the tests serve as it is written. */
const DOCUMENTED_CONFIG = new URL('../../docs/deploy/nginx-git-origin.conf', import.meta.url);

/** A git origin served by nginx, fcgiwrap and `git http-backend`, with basic auth, on a port of its own. */
export interface GitHttpOrigin {
  readonly user: string;
  readonly password: string;
  /** Where the bare repositories are. */
  readonly root: string;
  /** Makes a bare repository `name.git` and returns its URL without credentials. */
  repository(name: string): string;
  /** The URL of `name.git` with the user and password in it. */
  urlWithPassword(name: string): string;
  stop(): Promise<void>;
}

/** Replaces `from` in `text`, failing when the documented configuration no longer has it. */
function substitute(text: string, from: string, to: string): string {
  if (!text.includes(from)) throw new Error(`docs/deploy/nginx-git-origin.conf no longer has ${JSON.stringify(from)}: update the test's origin with it`);
  return text.split(from).join(to);
}

async function waitFor(ready: () => boolean | Promise<boolean>, what: string, log: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`${what} did not start: ${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Stops a server started in a process group of its own, and every process it forked (fcgiwrap's prefork children too). */
function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return Promise.resolve();
  const group = child.pid;
  return new Promise((resolve) => {
    child.once('exit', () => {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // Every process of the group has ended already.
      }
      resolve();
    });
    process.kill(-group, 'SIGTERM');
  });
}

/** Starts the documented origin: fcgiwrap on a socket, nginx with the documented server block in front. */
export async function startGitHttpOrigin(): Promise<GitHttpOrigin> {
  const base = mkdtempSync(join(tmpdir(), 'colony-origin-'));
  const root = join(base, 'git');
  mkdirSync(root);
  mkdirSync(join(base, 'temp'));
  const user = 'colony';
  const password = randomBytes(12).toString('hex');
  writeFileSync(join(base, 'htpasswd'), `${user}:{SHA}${createHash('sha1').update(password).digest('base64')}\n`);
  const socket = join(base, 'fcgiwrap.socket');
  const port = await freePort();
  let server = readFileSync(DOCUMENTED_CONFIG, 'utf8');
  server = substitute(server, 'listen 8418;', `listen 127.0.0.1:${port};`);
  server = substitute(server, '/etc/nginx/colony-origin.htpasswd', join(base, 'htpasswd'));
  server = substitute(server, 'unix:/run/fcgiwrap.socket', `unix:${socket}`);
  server = substitute(server, 'GIT_PROJECT_ROOT /srv/git', `GIT_PROJECT_ROOT ${root}`);
  writeFileSync(join(base, 'origin.conf'), server);
  const temp = (name: string) => `${name} ${join(base, 'temp', name.replace('_temp_path', ''))};`;
  writeFileSync(
    join(base, 'nginx.conf'),
    [
      'daemon off;',
      // Run as root (as CI does), its workers must be able to reach fcgiwrap's socket, made by root.
      ...(process.getuid?.() === 0 ? ['user root;'] : []),
      'worker_processes 2;',
      `pid ${join(base, 'nginx.pid')};`,
      `error_log ${join(base, 'error.log')} warn;`,
      'events { worker_connections 512; }',
      'http {',
      '  access_log off;',
      `  ${temp('client_body_temp_path')} ${temp('fastcgi_temp_path')} ${temp('proxy_temp_path')} ${temp('uwsgi_temp_path')} ${temp('scgi_temp_path')}`,
      `  include ${join(base, 'origin.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const fcgiwrap = spawn('fcgiwrap', ['-c', '16', '-s', `unix:${socket}`], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let fcgiwrapLog = '';
  fcgiwrap.stderr?.on('data', (chunk: Buffer) => (fcgiwrapLog += chunk.toString()));
  const nginx = spawn('nginx', ['-c', join(base, 'nginx.conf'), '-p', base, '-e', join(base, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let nginxLog = '';
  nginx.stderr?.on('data', (chunk: Buffer) => (nginxLog += chunk.toString()));
  const stop = async () => {
    await Promise.all([stopChild(nginx), stopChild(fcgiwrap)]);
    rmSync(base, { recursive: true, force: true });
  };
  try {
    await waitFor(() => existsSync(socket), 'fcgiwrap', () => fcgiwrapLog);
    await waitFor(() => listening(port), 'nginx', () => nginxLog + (existsSync(join(base, 'error.log')) ? readFileSync(join(base, 'error.log'), 'utf8') : ''));
  } catch (error) {
    await stop();
    throw error;
  }
  const url = (name: string) => `http://127.0.0.1:${port}/${name}.git`;
  return {
    user,
    password,
    root,
    repository(name) {
      execFileSync('git', ['init', '--quiet', '--bare', join(root, `${name}.git`)]);
      return url(name);
    },
    urlWithPassword: (name) => `http://${user}:${password}@127.0.0.1:${port}/${name}.git`,
    stop,
  };
}
