import type { DoctorCheck, DoctorReport } from './types.js';

/**
 * The doctor's text: a line per check (`pass`, `warn` or `fail`, its name, what it found), the
 * fix under each failure and each warning that has one, and the verdict last.
 */
export function formatDoctorReport(report: DoctorReport): string {
  const lines: string[] = [];
  for (const check of report.checks) {
    lines.push(`${check.status}  ${check.name}: ${check.detail}`);
    const fix = fixOf(check);
    if (fix !== null) lines.push(`      fix: ${fix}`);
  }
  lines.push(doctorVerdict(report));
  return `${lines.join('\n')}\n`;
}

/** One line: whether colony can run here, and what failed when it cannot. */
export function doctorVerdict(report: DoctorReport): string {
  const failed = report.checks.filter((check) => check.status === 'fail');
  const warned = report.checks.filter((check) => check.status === 'warn').length;
  const warnings = warned === 0 ? '' : `, ${warned} ${warned === 1 ? 'warning' : 'warnings'}`;
  if (failed.length === 0) return `verdict: colony can run here (${report.checks.length} checks, none failed${warnings}).`;
  const names = failed.map((check) => check.name).join(', ');
  return `verdict: colony cannot run here yet: ${failed.length} of ${report.checks.length} checks failed (${names}); fix them and run colony doctor again.`;
}

/** The report for `--json`: the same checks and verdict as the text. */
export function doctorJson(report: DoctorReport): string {
  return `${JSON.stringify({ ok: report.ok, verdict: doctorVerdict(report).replace(/^verdict: /, ''), checks: report.checks }, null, 2)}\n`;
}

function fixOf(check: DoctorCheck): string | null {
  if (check.status === 'pass') return null;
  return check.fix ?? null;
}
