import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import { defineTool } from "../tool-kit.js";

const todoItem = lazySchema(() =>
  z.object({
    content: z.string().min(1).describe("The task, imperative form (e.g. Run the tests)"),
    status: z.enum(["pending", "in_progress", "completed"]),
    activeForm: z
      .string()
      .min(1)
      .optional()
      .describe("Present continuous form shown while running (e.g. Running the tests)"),
  }),
);

export const todoWriteTool = defineTool({
  name: "TodoWrite",
  description:
    "Replaces this agent's task list. Use it for multi-step work: list the steps, keep exactly one in_progress, " +
    "mark each completed as soon as it is done. Send the whole list every time.",
  inputSchema: lazySchema(() => z.object({ todos: z.array(todoItem).describe("The updated todo list") })),
  // It rewrites agent state, so two calls must not interleave.
  isConcurrencySafe: () => false,
  isReadOnly: () => false,
  maxResultSizeChars: 100_000,
  async call(input, context) {
    context.agentState.todos = input.todos.map(({ content, status, activeForm }) =>
      activeForm === undefined ? { content, status } : { content, status, activeForm },
    );
    const count = (status: string): number => input.todos.filter((todo) => todo.status === status).length;
    return {
      content:
        `Todos have been modified successfully (${count("completed")} completed, ${count("in_progress")} in progress, ` +
        `${count("pending")} pending). Keep using the todo list to track progress, and proceed with the current task.`,
    };
  },
});
