/**
 * Collects a command's output within a byte budget, keeping the head and the tail: the start
 * says what the command was doing, the end says how it finished, and the middle of a long
 * build log is rarely worth the context it would cost.
 */
export class HeadTailCapture {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private readonly head: Buffer[] = [];
  private headBytes = 0;
  private tail: Buffer[] = [];
  private tailBytes = 0;
  private total = 0;

  /** `maxBytes` is the whole budget; half goes to the head, the rest to the tail. */
  constructor(private readonly maxBytes: number) {
    if (!Number.isInteger(maxBytes) || maxBytes < 2) {
      throw new RangeError(`maxBytes must be an integer of at least 2, got ${maxBytes}`);
    }
    this.headLimit = Math.floor(maxBytes / 2);
    this.tailLimit = maxBytes - this.headLimit;
  }

  append(chunk: Buffer): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.headBytes < this.headLimit) {
      const taken = rest.subarray(0, this.headLimit - this.headBytes);
      this.head.push(taken);
      this.headBytes += taken.length;
      rest = rest.subarray(taken.length);
    }
    if (rest.length === 0) return;
    this.tail.push(rest);
    this.tailBytes += rest.length;
    this.trimTail();
  }

  /** Every byte the command wrote, kept or not. */
  get totalBytes(): number {
    return this.total;
  }

  get truncated(): boolean {
    return this.total > this.maxBytes;
  }

  /** The kept output as safe text, with a marker line where bytes were dropped. */
  render(): string {
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    if (!this.truncated) return renderBytesAsText(Buffer.concat([head, tail]));
    const headKept = head.subarray(0, utf8BoundaryBefore(head));
    const tailKept = tail.subarray(utf8BoundaryAfter(tail));
    const omitted = this.total - headKept.length - tailKept.length;
    const headText = renderBytesAsText(headKept);
    const tailText = renderBytesAsText(tailKept);
    const beforeMarker = headText.endsWith('\n') || headText === '' ? '' : '\n';
    return `${headText}${beforeMarker}[... ${omitted} bytes omitted ...]\n${tailText}`;
  }

  private trimTail(): void {
    let excess = this.tailBytes - this.tailLimit;
    while (excess > 0) {
      const first = this.tail[0];
      if (first === undefined) return;
      if (first.length <= excess) {
        this.tail.shift();
        this.tailBytes -= first.length;
        excess -= first.length;
      } else {
        this.tail[0] = first.subarray(excess);
        this.tailBytes -= excess;
        excess = 0;
      }
    }
  }
}

function isContinuationByte(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0b1100_0000) === 0b1000_0000;
}

/** Where `bytes` should end so a multi-byte character cut at its end is dropped whole. */
function utf8BoundaryBefore(bytes: Buffer): number {
  const end = bytes.length;
  let start = end - 1;
  while (start >= 0 && end - start <= 4 && isContinuationByte(bytes[start])) start -= 1;
  const lead = bytes[start];
  if (lead === undefined || lead < 0b1100_0000) return end;
  const length = lead >= 0b1111_0000 ? 4 : lead >= 0b1110_0000 ? 3 : 2;
  return end - start >= length ? end : start;
}

/** The start of `bytes` moved forward past continuation bytes left over from a cut character. */
function utf8BoundaryAfter(bytes: Buffer): number {
  let index = 0;
  while (index < bytes.length && index < 3 && isContinuationByte(bytes[index])) index += 1;
  return index;
}

// ANSI escape sequences (colours, cursor moves) carry no meaning once captured.
// eslint-disable-next-line no-control-regex -- matching terminal control bytes is the point
const ANSI_ESCAPE = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?/g;
// eslint-disable-next-line no-control-regex -- matching terminal control bytes is the point
const CONTROL_CHARACTER = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/**
 * Bytes from a process as text that is safe to log and to show a model: invalid UTF-8 becomes
 * U+FFFD, terminal escapes are removed, carriage returns become line breaks, and NUL and other
 * control characters become U+FFFD. Never throws.
 */
export function renderBytesAsText(bytes: Buffer): string {
  const decoded = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  return decoded
    .replace(ANSI_ESCAPE, '')
    .replace(/\r\n/g, '\n')
    .replace(/\r/g, '\n')
    .replace(CONTROL_CHARACTER, '\uFFFD');
}
