import type { SecretRedactor } from '../events/secret-redaction.js';
import type { TaskStore } from './task-store.js';

/**
 * A task store that redacts what agents write into it (task briefs, handoffs, inbox messages),
 * as `createRedactingEventStore` does for events. Everything else is `store`'s.
 */
export function createRedactingTaskStore(store: TaskStore, redactor: SecretRedactor): TaskStore {
  return {
    createTask: (task, now) => store.createTask(redactor.redactValue(task), now),
    getTask: (id) => store.getTask(id),
    listTasks: (runId) => store.listTasks(runId),
    claim: (request) => store.claim(request),
    renewLeases: (holder, now, leaseMs) => store.renewLeases(holder, now, leaseMs),
    release: (taskId, holder) => store.release(taskId, holder),
    complete: (taskId, holder, handoff, now) => store.complete(taskId, holder, redactor.redactValue(handoff), now),
    sendMessage: (runId, recipientTaskId, text, now) => store.sendMessage(runId, recipientTaskId, redactor.redactText(text), now),
    takeInbox: (recipientTaskId) => store.takeInbox(recipientTaskId),
    unreadCount: (recipientTaskId) => store.unreadCount(recipientTaskId),
    openChildren: (parentTaskId) => store.openChildren(parentTaskId),
    movableChildren: (parentTaskId) => store.movableChildren(parentTaskId),
    setAndon: (taskId, paused, now) => store.setAndon(taskId, paused, now),
    pausedTasks: (runId) => store.pausedTasks(runId),
    deliveredHandoffs: (runId) => store.deliveredHandoffs(runId),
    close: () => store.close(),
  };
}
