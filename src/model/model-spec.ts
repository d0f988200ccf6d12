/** A model spec taken apart: `provider[:model][?options]`. */
export interface ParsedSpec {
  readonly spec: string;
  readonly provider: string;
  /** Empty when the spec has no `:model` part. */
  readonly modelId: string;
  readonly options: URLSearchParams;
}

const SPEC_PATTERN = /^([a-z][a-z0-9-]*)(?::([^?]*))?(?:\?(.*))?$/;

/** `spec` taken apart, or null when it is not of the form `provider[:model][?options]`. */
export function parseModelSpec(spec: string): ParsedSpec | null {
  const trimmed = spec.trim();
  const match = SPEC_PATTERN.exec(trimmed);
  if (match === null) return null;
  return { spec: trimmed, provider: match[1] ?? '', modelId: match[2] ?? '', options: new URLSearchParams(match[3] ?? '') };
}
