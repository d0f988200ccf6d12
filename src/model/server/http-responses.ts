import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WireFormat } from './wire-format.js';
import { errorMessage } from '../../errors/error-message.js';

/** Requests larger than this are refused rather than buffered. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export function writeJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

export function writeError(
  response: ServerResponse,
  format: WireFormat,
  status: number,
  message: string,
  headers: Readonly<Record<string, string>> = {},
  code?: string,
): void {
  writeJson(response, status, format.errorBody(status, message, code), headers);
}

export type BodyResult = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly error: string };

/** The whole request body as text; refuses more than MAX_BODY_BYTES. */
export function readBody(request: IncomingMessage): Promise<BodyResult> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    request.on('end', () => resolve(tooLarge ? { ok: false, error: `the request body is larger than ${MAX_BODY_BYTES} bytes` } : { ok: true, text: Buffer.concat(chunks).toString('utf8') }));
    request.on('error', reject);
  });
}

/** `text` parsed as JSON, or why it is not JSON. */
export function parseJson(text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error: errorMessage(error) };
  }
}
