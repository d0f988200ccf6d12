import { createServer } from 'node:net';

/**
 * A port on the loopback address that nothing listens on: one the system just handed out and
 * took back, so a connection to it is refused, as to a server that is not running.
 */
export async function unusedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('the probe server has no port');
  return address.port;
}
