/** What the message of a damaged store asks the user to add to its folder's name when moving it aside. */
export const DAMAGED_FOLDER_SUFFIX = '.damaged';

/**
 * A store's file that SQLite cannot read: not a database at all, or one whose pages are
 * damaged (cut short, overwritten). It is the user's file to deal with, not a fault of colony's,
 * so commands say what it says instead of reporting an internal error.
 */
export class DamagedStoreError extends Error {
  constructor(
    readonly path: string,
    message: string,
    cause: unknown,
  ) {
    super(message, { cause });
    this.name = 'DamagedStoreError';
  }
}
