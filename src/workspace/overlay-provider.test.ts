import { tmpdir } from 'node:os';
import { describe } from 'vitest';
import { createOverlayProvider } from './overlay-provider.js';
import { probeOverlaySupport } from './overlay-probe.js';
import { describeWorkspaceProviderConformance } from './workspace-provider.conformance.js';

const support = await probeOverlaySupport(tmpdir());

describe.runIf(support.ok)('overlay workspaces (mounting works here)', () => {
  describeWorkspaceProviderConformance('overlay', (repo, storageDir) => createOverlayProvider(repo, { storageDir }));
});
