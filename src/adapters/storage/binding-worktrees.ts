/**
 * The worktree each binding goes on in (state namespace `worktrees`,
 * docs/worktrees.md), beside the binding's session: a binding's next run
 * continues in it, across hall restarts, as long as the binding keeps that
 * session; a new session (`session reset`) starts a new worktree.
 */
import { z } from 'zod';
import type { RunWorktree } from '../../domain/worktree.js';
import type { HallStateStore } from '../../ports/state-store.js';
import { runWorktreeSchema } from './persisted-schemas.js';

const BindingWorktreeSchema = z.object({ session: z.string(), worktree: runWorktreeSchema });

export interface BindingWorktree {
  /** The session the worktree belongs to. */
  session: string;
  worktree: RunWorktree;
}

const NS = 'worktrees';

export class BindingWorktrees {
  constructor(private readonly store: HallStateStore) {}

  get(binding: string): BindingWorktree | undefined {
    const read = BindingWorktreeSchema.safeParse(this.store.state.get(NS, binding));
    return read.success ? read.data : undefined;
  }

  /** Written with the next commit: before the run's own record, which the raider waits for. */
  set(binding: string, value: BindingWorktree): void {
    this.store.apply({ op: 'set', ns: NS, key: binding, value });
  }

  unset(binding: string): void {
    if (this.store.state.get(NS, binding) !== undefined) this.store.apply({ op: 'unset', ns: NS, key: binding });
  }
}
