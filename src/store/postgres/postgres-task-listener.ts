import type { Client } from 'pg';
import { errorMessage } from '../../errors/error-message.js';
import type { PostgresConnection } from './postgres-connection.js';
import { redactedError } from './postgres-failures.js';
import type { TaskChange } from './postgres-task-rows.js';

/** How long a listener whose connection broke waits before it listens again. */
const RELISTEN_DELAY_MS = 1_000;

function changeOf(payload: string | undefined): TaskChange | undefined {
  try {
    const parsed = JSON.parse(payload ?? '') as Partial<TaskChange>;
    if (typeof parsed.runId !== 'string') return undefined;
    if (parsed.change !== 'created' && parsed.change !== 'released' && parsed.change !== 'andon') return undefined;
    return { runId: parsed.runId, change: parsed.change };
  } catch {
    return undefined;
  }
}

/**
 * LISTENs for the task store's notifications on a connection of its own (a pooled one would
 * be handed to others), while anyone subscribes. A hint, never the truth: a notification can
 * be missed while the connection is down (it listens again a second later), so whoever waits
 * on one still polls.
 */
export class TaskChangeListener {
  private readonly listeners = new Set<(change: TaskChange) => void>();
  private client: Client | undefined;
  private listening: Promise<void> | undefined;
  private relisten: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly connection: PostgresConnection,
    private readonly channel: string,
  ) {}

  /** Calls `listener` on every change from now on; resolves, with how to stop, once listening. */
  async subscribe(listener: (change: TaskChange) => void): Promise<() => void> {
    this.listeners.add(listener);
    const stop = (): void => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stopListening();
    };
    try {
      await (this.listening ?? this.listen());
    } catch (error) {
      stop();
      redactedError(error, this.connection.redact);
      throw new Error(`Could not listen for task changes on ${this.connection.describe()}: ${this.connection.redact(errorMessage(error))}`, { cause: error });
    }
    return stop;
  }

  close(): void {
    this.closed = true;
    this.listeners.clear();
    this.stopListening();
  }

  private listen(): Promise<void> {
    const client = this.connection.newClient();
    this.client = client;
    client.on('notification', (message) => {
      const change = message.channel === this.channel ? changeOf(message.payload) : undefined;
      if (change === undefined) return;
      for (const listener of [...this.listeners]) {
        try {
          listener(change);
        } catch {
          // A listener's own failure is its own: the others still hear of the change.
        }
      }
    });
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    this.listening = client
      .connect()
      .then(async () => {
        await client.query(`LISTEN ${this.channel}`);
      })
      .catch((error: unknown) => {
        this.lost(client);
        throw error;
      });
    return this.listening;
  }

  /** The connection broke (or never came up): listen again shortly while anyone still listens. */
  private lost(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.listening = undefined;
    client.end().catch(() => undefined);
    if (this.closed || this.listeners.size === 0 || this.relisten !== undefined) return;
    this.relisten = setTimeout(() => {
      this.relisten = undefined;
      if (!this.closed && this.listeners.size > 0 && this.client === undefined) this.listen().catch(() => undefined);
    }, RELISTEN_DELAY_MS);
    this.relisten.unref();
  }

  private stopListening(): void {
    if (this.relisten !== undefined) clearTimeout(this.relisten);
    this.relisten = undefined;
    const client = this.client;
    this.client = undefined;
    this.listening = undefined;
    client?.end().catch(() => undefined);
  }
}
