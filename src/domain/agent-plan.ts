/** An agent's plan for its turn, as a run's `plan` event keeps it: ACP's plan entries, whole each time it changes. */
import { z } from 'zod';

export const PlanEntries = z.array(
  z.object({
    content: z.string(),
    priority: z.enum(['high', 'medium', 'low']),
    status: z.enum(['pending', 'in_progress', 'completed']),
  }),
);
export type PlanEntries = z.infer<typeof PlanEntries>;
