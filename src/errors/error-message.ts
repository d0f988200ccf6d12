/**
 * The message of anything thrown: an Error's message, else the value as a string. What colony
 * puts in a failure's `error` when a call it made threw.
 */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
