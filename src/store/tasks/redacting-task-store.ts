import type { SecretRedactor } from '../../events/secret-redaction.js';
import type { TaskStore } from './task-store.js';

/**
 * A task store that redacts what agents and people write into it (task briefs, handoffs, inbox
 * messages, the reasons of run andons and requests), as `createRedactingEventStore` does for events.
 * Everything else is `store`'s.
 */
export function createRedactingTaskStore(store: TaskStore, redactor: SecretRedactor): TaskStore {
  return {
    createTask: (task, now, publisher) => store.createTask(redactor.redactValue(task), now, publisher),
    getTask: (id) => store.getTask(id),
    listTasks: (runId) => store.listTasks(runId),
    listChildren: (parentTaskId) => store.listChildren(parentTaskId),
    claim: (request) => store.claim(request),
    renewLeases: (holder, now, leaseMs) => store.renewLeases(holder, now, leaseMs),
    release: (taskId, lease) => store.release(taskId, lease),
    complete: (taskId, lease, handoff, now) => store.complete(taskId, lease, redactor.redactValue(handoff), now),
    releaseAbandoned: (runId, now) => store.releaseAbandoned(runId, now),
    sendMessage: (runId, recipientTaskId, text, now, sender) => store.sendMessage(runId, recipientTaskId, redactor.redactText(text), now, sender),
    takeInbox: (recipientTaskId, lease) => store.takeInbox(recipientTaskId, lease),
    takenInbox: (recipientTaskId) => store.takenInbox(recipientTaskId),
    unreadCount: (recipientTaskId) => store.unreadCount(recipientTaskId),
    openChildren: (parentTaskId) => store.openChildren(parentTaskId),
    movableChildren: (parentTaskId) => store.movableChildren(parentTaskId),
    setAndon: (taskId, paused, now, lease) => store.setAndon(taskId, paused, now, lease),
    pausedTasks: (runId) => store.pausedTasks(runId),
    setRunAndon: (runId, paused, reason, now) => store.setRunAndon(runId, paused, redactor.redactText(reason), now),
    runAndon: (runId) => store.runAndon(runId),
    runAndonChanges: (runId, afterSeq) => store.runAndonChanges(runId, afterSeq),
    requestWorkers: (runId, workers, reason, now) => store.requestWorkers(runId, workers, redactor.redactText(reason), now),
    requestStop: (runId, taskId, reason, now) => store.requestStop(runId, taskId, redactor.redactText(reason), now),
    requestGreen: (runId, reason, now) => store.requestGreen(runId, redactor.redactText(reason), now),
    runRequests: (runId, afterSeq) => store.runRequests(runId, afterSeq),
    personMessages: (runId, afterSeq) => store.personMessages(runId, afterSeq),
    deliveredHandoffs: (runId) => store.deliveredHandoffs(runId),
    close: () => store.close(),
  };
}
