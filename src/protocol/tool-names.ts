/**
 * The names of the tools colony offers agents: `tools/` gives each tool its name from here, and
 * a model that calls them (the sim among them) reads them from here, so the two never drift.
 */
export const TOOL_NAMES = {
  readFile: 'read_file',
  writeFile: 'write_file',
  editFile: 'edit_file',
  listDir: 'list_dir',
  search: 'search',
  runCommand: 'run_command',
  mergeToMain: 'merge_to_main',
  submitHandoff: 'submit_handoff',
  writeScratchpad: 'write_scratchpad',
  createTask: 'create_task',
  delegate: 'delegate',
  andon: 'andon',
  finish: 'finish',
} as const;

export type ToolName = (typeof TOOL_NAMES)[keyof typeof TOOL_NAMES];
