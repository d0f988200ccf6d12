import { missingConfinementNeed } from '../src/sandbox/testing/confined-test-support.js';

/**
 * Says once, before the suite, what it skips on this machine: the tests that confine commands
 * (the sandbox's own, and every test that runs colony end to end) need root, bubblewrap and
 * cgroups. `.ci/run` installs them and sets COLONY_REQUIRE_SANDBOX_TESTS=1, so there they run.
 */
export default function setup(): void {
  if (process.env.COLONY_REQUIRE_SANDBOX_TESTS === '1') return;
  const missing = missingConfinementNeed('bubblewrap');
  if (missing !== null) {
    process.stderr.write(`colony tests: skipping the tests that confine commands or run colony end to end, because ${missing}; .ci/run installs what they need and runs them all.\n`);
  }
}
