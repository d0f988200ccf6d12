import { describe } from 'vitest';
import { confinedTestsUnavailable } from '../../src/sandbox/testing/confined-test-support.js';

/**
 * Why the tests that run colony end to end cannot run here, or null: `colony run` confines
 * agents' commands with bubblewrap by default and refuses, as it should, where it cannot. Never
 * a reason under CI (COLONY_REQUIRE_SANDBOX_TESTS=1), which installs what they need.
 */
export const RUNS_UNAVAILABLE = confinedTestsUnavailable('bubblewrap');

/** `describe` for tests that run colony with its default sandbox: skipped where it cannot confine. */
export const describeRuns = describe.skipIf(RUNS_UNAVAILABLE !== null);
