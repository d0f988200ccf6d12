import { z } from 'zod';

/* The fields several event types share: roles, task kinds, budgets, token usage, tool calls. */

export const usageSchema = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cachedInputTokens: z.number().int().nonnegative(),
  /** Absent in runs recorded before cache writes were counted, and for providers that report none. */
  cacheWriteTokens: z.number().int().nonnegative().optional(),
});

export const toolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** The arguments exactly as the model sent them: possibly not JSON at all. */
  input: z.string(),
});

/** The three roles of the tree. */
export const agentRoleSchema = z.enum(['root-planner', 'sub-planner', 'worker']);
export type AgentRole = z.infer<typeof agentRoleSchema>;

export const taskKindSchema = z.enum(['worker', 'planner']);

export const workspaceMethodSchema = z.enum(['worktree', 'overlay']);

/** Which limit: tokens in and out, US dollars, or the wall clock (milliseconds). */
export const budgetMeasureSchema = z.enum(['tokens', 'usd', 'time']);
export type BudgetMeasure = z.infer<typeof budgetMeasureSchema>;

/** One scope's figures for one limit: the run (the root planner's task) or a delegated subtree. */
export const budgetFiguresSchema = z.object({
  /** The planner task that owns the scope; the root planner's task for the run. */
  taskId: z.string(),
  scope: z.enum(['run', 'subtree']),
  measure: budgetMeasureSchema,
  spent: z.number(),
  limit: z.number(),
});
