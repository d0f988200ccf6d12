import type { SecretRedactor } from '../../events/secret-redaction.js';
import type { ChatModel, ModelError } from '../../model/chat-model.js';

function redactError(error: ModelError, redactor: SecretRedactor): ModelError {
  return { ...error, message: redactor.redactText(error.message) };
}

/**
 * `model` with the messages of its failures and retries redacted: a provider's error can repeat
 * the request's key or URL, and those messages travel on into events, an agent's reason for
 * failing, a synthetic handoff and the terminal. What the model answers is passed on untouched.
 */
export function createRedactingChatModel(model: ChatModel, redactor: SecretRedactor): ChatModel {
  return {
    spec: redactor.redactText(model.spec),
    async call(request, options) {
      const onRetry = options?.onRetry;
      const result = await model.call(request, {
        ...options,
        ...(onRetry === undefined ? {} : { onRetry: (notice) => onRetry({ ...notice, error: redactError(notice.error, redactor) }) }),
      });
      return result.ok ? result : { ...result, error: redactError(result.error, redactor) };
    },
  };
}
