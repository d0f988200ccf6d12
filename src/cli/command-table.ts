import type { Command } from 'commander';
import type { CommandContext } from './command-context.js';

/** Adds a command's arguments, options and action to it, once it is named and described. */
export type DefineCommand = (command: Command, ctx: CommandContext) => void;

/**
 * One of colony's commands: its name and description, which the top-level help lists, and its
 * module, loaded only when the command runs or its own help is asked for. `colony status`
 * then loads what a status needs and not the model providers, the sandbox or the terminal UI.
 */
export interface CommandEntry {
  readonly name: string;
  readonly description: string;
  readonly load: () => Promise<DefineCommand>;
}

export const COMMANDS: readonly CommandEntry[] = [
  { name: 'run', description: 'Build a goal with a tree of agents: a root planner, sub-planners and workers that merge into main. Flags left out come from COLONY_* variables, colony.toml and your ~/.config/colony/config.toml (see colony config).', load: async () => (await import('./commands/run.js')).defineRunCommand },
  { name: 'resume', description: 'Continue the run that stopped or crashed in a repository, where it stopped, with the same tree, settings and budgets.', load: async () => (await import('./commands/resume.js')).defineResumeCommand },
  { name: 'worker', description: "Host workers for the runs of a shared store (--store postgres://…) on this machine: claim their worker tasks, work in this host's own copy of the origin and land there; Ctrl-C or SIGTERM lets its tasks go.", load: async () => (await import('./host/worker-command.js')).defineWorkerCommand },
  { name: 'land', description: "Bring the last run's work into the branch you have checked out: a fast-forward, or a merge when both moved; refused with the reason when they do not merge cleanly.", load: async () => (await import('./land/land-command.js')).defineLandCommand },
  { name: 'init', description: 'Set a repository up for colony: a colony.toml with every setting commented out, and a GOAL.md template to fill in.', load: async () => (await import('./config/init-command.js')).defineInitCommand },
  { name: 'config', description: 'Show the settings colony run would use in a repository and where each comes from: a flag, a COLONY_* variable, colony.toml, your own config file, or the default.', load: async () => (await import('./config/config-command.js')).defineConfigCommand },
  { name: 'status', description: 'Report a run, live or finished: agents, tasks, handoffs, commits, tokens, cost and the tree.', load: async () => (await import('./commands/status.js')).defineStatusCommand },
  { name: 'say', description: 'Send a message to a planner of the run: the root planner, or the one named with --to. It reads it before its next model call.', load: async () => (await import('./commands/say.js')).defineSayCommand },
  { name: 'andon', description: 'Pause spawning across the whole run: no task is claimed until you release it (--release); agents already running go on.', load: async () => (await import('./commands/andon.js')).defineAndonCommand },
  { name: 'workers', description: 'Change how many workers the run may run at once. With fewer, running workers go on and no new one starts until fewer run.', load: async () => (await import('./commands/workers.js')).defineWorkersCommand },
  { name: 'green', description: "Where the green branch is and how main's health went; with --now, a snapshot of main now: the green branch moves to it if the check passes, and a failure is traced to the commit that brought it.", load: async () => (await import('./commands/green.js')).defineGreenCommand },
  { name: 'stop', description: "Stop one agent of the run (a worker or a sub-planner): its task closes as failed with your reason, and its planner hears it and may publish the work again.", load: async () => (await import('./commands/stop.js')).defineStopCommand },
  { name: 'clean', description: 'Remove what ended runs left in the state directory (overlay mounts, workspaces, worktree records, overlay bases, views, dependency layers, spill files), keeping the event log and what a stopped run needs to resume; --stopped, --damaged and --salvage go further.', load: async () => (await import('./clean/clean-command.js')).defineCleanCommand },
  { name: 'work', description: 'Run one worker on one task: it works in its own workspace, merges into main and hands off.', load: async () => (await import('./commands/work.js')).defineWorkCommand },
  { name: 'events', description: 'Print the event log of the runs in a repository (or a state directory).', load: async () => (await import('./commands/events.js')).defineEventsCommand },
  { name: 'tui', description: 'Watch and steer a run in the terminal, live or finished: the agent tree, throughput, the event tail, each agent\'s transcript.', load: async () => (await import('./commands/tui.js')).defineTuiCommand },
  { name: 'replay', description: 'Play a recorded run back in the terminal UI from its log alone: at a speed, paused, or one event at a time.', load: async () => (await import('./commands/replay.js')).defineReplayCommand },
  { name: 'analyze', description: 'Answer what a person debugging a run asks, from its event log: slow and failing commands, stalls and loops, conflicts, retries, crashes, cost, time to land, main health.', load: async () => (await import('./commands/analyze.js')).defineAnalyzeCommand },
  { name: 'sim-server', description: 'Serve the simulated model over the OpenAI chat completions and Anthropic messages protocols.', load: async () => (await import('./commands/sim-server.js')).defineSimServerCommand },
  { name: 'demo', description: 'Build the bundled example project with the simulated model: a root planner and workers that merge into main.', load: async () => (await import('./commands/demo.js')).defineDemoCommand },
  { name: 'doctor', description: 'Check that this machine can run colony: Node, git, the sandbox, the repository and its state directory, the disk and the models; one line per check with the fix for each failure.', load: async () => (await import('./commands/doctor.js')).defineDoctorCommand },
  { name: 'bench', description: "Measure colony's parts on this machine and a repository.", load: async () => (await import('./commands/bench.js')).defineBenchCommand },
];

/**
 * The command `argv` names, when it names one: its first word (`colony status --json`), or the
 * word after `help` (`colony help status`). Null for `colony --help`, `--version` or a typo,
 * which need only the names and descriptions.
 */
export function commandNamed(argv: readonly string[]): CommandEntry | null {
  const words = argv.filter((arg) => !arg.startsWith('-'));
  const name = words[0] === 'help' ? words[1] : words[0];
  return COMMANDS.find((entry) => entry.name === name) ?? null;
}
