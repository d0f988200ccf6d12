import { describe, expect, it } from 'vitest';
import { handleInterrupts } from './interrupts.js';

describe('handleInterrupts', () => {
  it('stops gracefully at the first signal and quits at once only after three more', async () => {
    const said: string[] = [];
    const exits: number[] = [];
    const handling = handleInterrupts((text) => said.push(text), (code) => exits.push(code));
    try {
      process.kill(process.pid, 'SIGTERM');
      await expect.poll(() => handling.signal.aborted).toBe(true);
      expect(said[0]).toMatch(/^colony: SIGTERM: stopping after the current step/);
      process.kill(process.pid, 'SIGHUP');
      process.kill(process.pid, 'SIGINT');
      await expect.poll(() => said.length).toBe(3);
      expect(exits).toEqual([]);
      process.kill(process.pid, 'SIGINT');
      await expect.poll(() => exits).toEqual([130]);
    } finally {
      handling.dispose();
    }
    expect(process.listenerCount('SIGHUP')).toBe(0);
  });

  it('stops even when the terminal is gone and every write fails', async () => {
    const handling = handleInterrupts(
      () => {
        throw new Error('write EIO');
      },
      () => undefined,
    );
    try {
      process.kill(process.pid, 'SIGHUP');
      await expect.poll(() => handling.signal.aborted).toBe(true);
    } finally {
      handling.dispose();
    }
  });
});
