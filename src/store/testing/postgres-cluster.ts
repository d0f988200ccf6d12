import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const POSTGRES_ROOT = '/usr/lib/postgresql';
/** The role the tests connect as: the cluster's superuser, with a password, over TCP. */
const ROLE = 'colony';

/**
 * A PostgreSQL server of a test's own: a fresh cluster in a temporary folder, on a free port on
 * 127.0.0.1 and a socket in that folder, so it neither uses nor disturbs a server already
 * running on the machine. Its superuser `colony` logs in over TCP with a password (scram), so
 * the stores' redaction of it is exercised. Durability is off (`initdb -N`, `fsync=off`): a
 * test cluster never outlives its test file.
 */
export interface PostgresCluster {
  readonly port: number;
  readonly password: string;
  /** The URL of `database` on this cluster, password included. */
  url(database: string): string;
  /** Creates `database` the first time it is asked for, and returns its URL. */
  database(name: string): Promise<string>;
  /** Stops the server at once (as a crash would) and starts it again on the same port and data. */
  stopServer(): Promise<void>;
  startServer(): Promise<void>;
  /** Stops the server and removes the folder; safe to call twice. */
  remove(): Promise<void>;
}

/** The folder of the newest PostgreSQL server programs Debian installed, or undefined when there are none. */
export function postgresBinDir(root = POSTGRES_ROOT): string | undefined {
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((version) => existsSync(join(root, version, 'bin', 'initdb')))
    .sort((left, right) => Number.parseFloat(right) - Number.parseFloat(left));
  const newest = versions[0];
  return newest === undefined ? undefined : join(root, newest, 'bin');
}

export const POSTGRES_MISSING =
  `The PostgreSQL store's tests start a server of their own and need PostgreSQL's server programs (initdb, pg_ctl) under ${POSTGRES_ROOT}/<version>/bin. ` +
  'Install them with: apt-get install postgresql (Debian, Ubuntu). Where that cannot be done, COLONY_SKIP_POSTGRES_TESTS=1 skips these tests.';

/** A port on 127.0.0.1 that nothing listened on a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('Could not find a free port for the test PostgreSQL server.');
  return address.port;
}

/** Runs one of the server programs: as the `postgres` user when this process is root (initdb refuses root), else directly. */
function serverProgram(bin: string, program: string, args: readonly string[]): { file: string; args: string[] } {
  const path = join(bin, program);
  return process.getuid?.() === 0 ? { file: 'runuser', args: ['-u', 'postgres', '--', path, ...args] } : { file: path, args: [...args] };
}

async function runServerProgram(bin: string, program: string, args: readonly string[], log?: string): Promise<void> {
  const command = serverProgram(bin, program, args);
  try {
    await run(command.file, command.args, { env: { ...process.env, LC_ALL: 'C' } });
  } catch (error) {
    const tail = log !== undefined && existsSync(log) ? `\nServer log:\n${readFileSync(log, 'utf8').slice(-2_000)}` : '';
    throw new Error(`${program} ${args.join(' ')} failed: ${error instanceof Error ? error.message : String(error)}${tail}`, { cause: error });
  }
}

/** Folders of clusters still running, removed at exit should a test file end without its afterAll. */
const running = new Map<string, () => void>();
process.on('exit', () => {
  for (const removeNow of running.values()) removeNow();
});

/** Hands the folder to the `postgres` user when this process is root, so the server it runs as can use it. */
function ownedByServer(path: string): void {
  if (process.getuid?.() !== 0) return;
  const [uid, gid] = ['-u', '-g'].map((flag) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim()));
  chownSync(path, uid ?? 0, gid ?? 0);
}

/**
 * Starts a fresh cluster from the newest server programs under `postgresRoot`; throws
 * `POSTGRES_MISSING` when there are none.
 */
export async function startPostgresCluster(postgresRoot = POSTGRES_ROOT): Promise<PostgresCluster> {
  const bin = postgresBinDir(postgresRoot);
  if (bin === undefined) throw new Error(POSTGRES_MISSING);
  const dir = mkdtempSync(join(tmpdir(), 'colony-pg-'));
  chmodSync(dir, 0o700);
  ownedByServer(dir);
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  const password = `pw-${randomBytes(12).toString('hex')}`;
  const passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, password, { mode: 0o600 });
  ownedByServer(passwordFile);
  const port = await freePort();
  const removeNow = (): void => {
    try {
      const stop = serverProgram(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      execFileSync(stop.file, stop.args, { stdio: 'ignore' });
    } catch {
      // Not running: there is only the folder to remove.
    }
    rmSync(dir, { recursive: true, force: true });
  };
  running.set(dir, removeNow);
  const settings = [
    `-p ${port}`,
    '-c listen_addresses=127.0.0.1',
    `-c unix_socket_directories=${dir}`,
    // Nothing is synced to disk, but every commit reaches the kernel before it returns
    // (synchronous_commit stays on), so a server stopped at once, as a crash would, keeps it.
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c max_connections=200',
  ].join(' ');
  const startServer = (): Promise<void> => runServerProgram(bin, 'pg_ctl', ['-D', data, '-l', log, '-o', settings, '-w', '-t', '60', 'start'], log);
  const stopServer = (): Promise<void> => runServerProgram(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'], log);
  try {
    await runServerProgram(bin, 'initdb', ['-D', data, '-U', ROLE, `--pwfile=${passwordFile}`, '--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--locale=C', '-N']);
    await startServer();
  } catch (error) {
    running.delete(dir);
    removeNow();
    throw error;
  }
  const url = (database: string): string => `postgres://${ROLE}:${password}@127.0.0.1:${port}/${database}`;
  const databases = new Map<string, Promise<string>>();
  return {
    port,
    password,
    url,
    database: (name) => {
      let created = databases.get(name);
      if (created === undefined) {
        created = createDatabase(url('postgres'), name).then(() => url(name));
        databases.set(name, created);
      }
      return created;
    },
    stopServer,
    startServer,
    remove: async () => {
      if (!running.delete(dir)) return;
      removeNow();
    },
  };
}

async function createDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
}
