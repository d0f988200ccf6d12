import { createEditFileTool } from './edit-file-tool.js';
import { createListDirTool } from './list-dir-tool.js';
import { createReadFileTool } from './read-file-tool.js';
import { createRunCommandTool } from './run-command-tool.js';
import type { RunCommandToolOptions } from './run-command-tool.js';
import { createSearchTool } from './search-tool.js';
import type { SearchToolOptions } from './search-tool.js';
import type { AnyTool } from './tool.js';
import { createWriteFileTool } from './write-file-tool.js';
import type { WorkspaceRoot } from './workspace-paths.js';

export type WorkerFileToolsOptions = RunCommandToolOptions & SearchToolOptions;

/**
 * The tools a worker uses on its own workspace, in this order: read_file, write_file,
 * edit_file, list_dir, search, run_command. The role tools (merge_to_main, submit_handoff)
 * are added by the caller.
 */
export function createWorkerFileTools(workspace: WorkspaceRoot, options: WorkerFileToolsOptions = {}): AnyTool[] {
  return [
    createReadFileTool(workspace),
    createWriteFileTool(workspace),
    createEditFileTool(workspace),
    createListDirTool(workspace),
    createSearchTool(workspace, options),
    createRunCommandTool(workspace, options),
  ];
}
