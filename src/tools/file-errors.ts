import { errorMessage } from '../errors/error-message.js';

/** The `code` of a Node.js system error, such as `ENOENT`, or undefined for anything else. */
export function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

/**
 * A file-system failure in words a model can act on: `cannot <action> <path>: <reason>`.
 * `action` is a verb phrase such as "write" or "read".
 */
export function describeFileError(error: unknown, action: string, path: string): string {
  return `cannot ${action} ${path}: ${reasonFor(error)}`;
}

function reasonFor(error: unknown): string {
  switch (errorCode(error)) {
    case 'ENOENT':
      return 'it does not exist';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    case 'ENOTDIR':
      return 'a parent of it is a file, not a directory';
    case 'EEXIST':
      return 'a parent of it is a file, not a directory';
    case 'ENOSPC':
      return 'the disk is full';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENAMETOOLONG':
      return 'the path or one of its names is too long';
    case 'ELOOP':
      return 'it is a symbolic link, or a loop of them';
    default:
      return errorMessage(error);
  }
}
