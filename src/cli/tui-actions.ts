import { openSteering } from '../orchestrator/session/steering-access.js';
import type { RunState } from '../orchestrator/setup/run-state.js';
import { currentWorkerLimit, setWorkers, stopAgent } from '../orchestrator/steering/steering-controls.js';
import { pullRunAndon, releaseRunAndon, sendToPlanner, type SteeringStores } from '../orchestrator/steering/steering.js';
import type { SteeringOutcome, TuiActions } from '../ui/tui/tui-source.js';
import { errorMessage } from '../errors/error-message.js';

/**
 * The terminal UI's steering keys, doing what `colony andon`, `colony say`, `colony stop` and
 * `colony workers` do: each opens the run's state (its state directory or store), makes its one change and lets go,
 * so any number of UIs (and the commands) can steer the same run. With `shownRunId`, a key
 * refuses when the run that can be steered is another one than the screen shows.
 */
export function steeringActions(state: RunState, secrets: readonly string[], shownRunId: string | null = null): TuiActions {
  const steerOnce = async (change: (stores: SteeringStores, runId: string) => Promise<SteeringOutcome>): Promise<SteeringOutcome> => {
    const access = await openSteering(state, secrets);
    if (!access.ok) return { ok: false, message: access.error };
    try {
      const { runId } = access.run;
      if (shownRunId !== null && runId !== shownRunId) {
        return { ok: false, message: `This screen shows run ${shownRunId}, which has ended; the run going now is ${runId}. Steer it from colony tui --run ${runId}.` };
      }
      return await change(access.stores, runId);
    } catch (error) {
      return { ok: false, message: `colony could not record that: ${errorMessage(error)}` };
    } finally {
      await access.close();
    }
  };
  // One change at a time, in the order the keys asked for them: each reads the store as the one
  // before left it, so `+` pressed twice adds two workers, and `a` twice pulls and releases.
  let turn: Promise<unknown> = Promise.resolve();
  const steer = (change: (stores: SteeringStores, runId: string) => Promise<SteeringOutcome>): Promise<SteeringOutcome> => {
    const next = turn.then(() => steerOnce(change));
    turn = next.catch(() => undefined);
    return next;
  };
  const workersTo = async (stores: SteeringStores, runId: string, workers: number): Promise<SteeringOutcome> => {
    const set = await setWorkers(stores, runId, workers, 'set from the terminal UI');
    if (!set.ok) return { ok: false, message: set.error };
    return { ok: true, message: set.request === null ? `The run already runs up to ${workers} worker(s) at once.` : `Up to ${workers} worker(s) at once from now on.` };
  };
  return {
    toggleAndon: (reason) =>
      steer(async (stores, runId) => {
        if ((await stores.tasks.runAndon(runId))?.paused === true) {
          const released = await releaseRunAndon(stores, runId, 'released from the terminal UI');
          return released.ok ? { ok: true, message: 'Spawning released: tasks are claimed again.' } : { ok: false, message: released.error };
        }
        const pulled = await pullRunAndon(stores, runId, reason);
        return pulled.ok ? { ok: true, message: 'Spawning paused across the run (andon): no task is claimed until you press a again.' } : { ok: false, message: pulled.error };
      }),
    say: (target, text) =>
      steer(async (stores, runId) => {
        const sent = await sendToPlanner(stores, runId, target, text);
        return sent.ok ? { ok: true, message: `Sent to ${sent.recipient.role} ${sent.recipient.agentId ?? sent.recipient.taskId}: it reads it before its next step.` } : { ok: false, message: sent.error };
      }),
    stop: (target, reason) =>
      steer(async (stores, runId) => {
        const stopped = await stopAgent(stores, runId, target, reason);
        if (!stopped.ok) return { ok: false, message: stopped.error };
        const name = `${stopped.agent.role} ${stopped.agent.agentId ?? stopped.agent.taskId}`;
        return { ok: true, message: stopped.repeated ? `${name} is being stopped already.` : `Stopping ${name}: its task closes as failed and its planner is told.` };
      }),
    setWorkers: (workers) => steer((stores, runId) => workersTo(stores, runId, workers)),
    changeWorkers: (delta) =>
      steer(async (stores, runId) => {
        const now = await currentWorkerLimit(stores, runId);
        if (now === null) return { ok: false, message: 'The run has recorded no worker limit to change; press w to set one.' };
        if (now + delta < 1) return { ok: false, message: 'One worker is the fewest; to let none start for a while, press a (andon).' };
        return workersTo(stores, runId, now + delta);
      }),
  };
}
