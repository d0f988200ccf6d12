/** A run of lines taken from a stream of bytes, with what was left out. */
export interface LineSelection {
  /** The selected lines exactly as stored, line endings included. */
  readonly bytes: Buffer;
  /** The last line included whole; `firstLine - 1` when none was. */
  readonly lastLine: number;
  /** Lines in the whole stream; a last line without a newline counts. */
  readonly totalLines: number;
  /** Set when the first selected line alone was over the byte budget and only its start is in `bytes`. */
  readonly cutLine: { readonly number: number; readonly bytes: number; readonly shownBytes: number } | null;
}

/**
 * Takes lines `firstLine` to `firstLine + maxLines - 1` from `chunks`, stopping early when the
 * next whole line would take the selection past `maxBytes`. Reads the stream to its end to count
 * the lines, but holds at most `maxBytes` of it in memory, so any file size is fine.
 */
export async function selectLines(
  chunks: AsyncIterable<Buffer>,
  firstLine: number,
  maxLines: number,
  maxBytes: number,
): Promise<LineSelection> {
  const lastWanted = firstLine + maxLines - 1;
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let lastLine = firstLine - 1;
  let cutLine: LineSelection['cutLine'] = null;
  let collecting = true;
  let lineNumber = 1;
  let lineParts: Buffer[] = [];
  let lineHeldBytes = 0;
  let lineBytes = 0;

  const wanted = (): boolean => collecting && lineNumber >= firstLine && lineNumber <= lastWanted;
  const completeLine = (): void => {
    if (wanted()) {
      if (keptBytes + lineBytes <= maxBytes) {
        kept.push(...lineParts);
        keptBytes += lineBytes;
        lastLine = lineNumber;
      } else {
        collecting = false;
        if (lastLine < firstLine) {
          const shown = Buffer.concat(lineParts);
          kept.push(shown);
          cutLine = { number: lineNumber, bytes: lineBytes, shownBytes: shown.length };
        }
      }
    }
    lineParts = [];
    lineHeldBytes = 0;
    lineBytes = 0;
  };

  for await (const chunk of chunks) {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline + 1;
      if (wanted() && lineHeldBytes < maxBytes) {
        // No line is ever shown past maxBytes, so a huge line is never held whole.
        const piece = chunk.subarray(start, Math.min(end, start + maxBytes - lineHeldBytes));
        lineParts.push(piece);
        lineHeldBytes += piece.length;
      }
      lineBytes += end - start;
      start = end;
      if (newline !== -1) {
        completeLine();
        lineNumber += 1;
      }
    }
  }
  let totalLines = lineNumber - 1;
  if (lineBytes > 0) {
    completeLine();
    totalLines = lineNumber;
  }
  return { bytes: Buffer.concat(kept), lastLine, totalLines, cutLine };
}
