import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

const BIN = new URL('../../bin/colony.js', import.meta.url).pathname;

export interface SimServerProcess {
  readonly process: ChildProcess;
  /** The OpenAI-compatible base URL the server printed. */
  readonly baseUrl: string;
}

/** Starts the real `colony sim-server` with `spec` (and `flags`, such as `--no-prompt-cache`) on a free port and reads its address from what it prints. */
export async function startSimServer(spec: string, flags: readonly string[] = []): Promise<SimServerProcess> {
  const server = spawn(process.execPath, [BIN, 'sim-server', '--port', '0', '--sim', spec, ...flags], { stdio: ['ignore', 'pipe', 'pipe'] });
  let printed = '';
  const baseUrl = await new Promise<string>((resolve, reject) => {
    server.stdout?.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      const match = /--base-url (http:\/\/127\.0\.0\.1:\d+\/v1)/.exec(printed);
      if (match?.[1] !== undefined) resolve(match[1]);
    });
    server.once('exit', (code) => reject(new Error(`sim-server exited with ${code}: ${printed}`)));
  });
  return { process: server, baseUrl };
}

/** Stops the server with SIGTERM; its exit code, or null when it had already exited. */
export async function stopSimServer(server: ChildProcess): Promise<number | null> {
  if (server.exitCode !== null) return null;
  const exited = once(server, 'exit');
  server.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  return code;
}
