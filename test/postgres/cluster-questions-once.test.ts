// A question of another hall is put to the person here once (docs/cluster.md, "ACP across halls"):
// while this hall writes the person's answer, a look at the cluster (the doorbell of any other
// write, or the half-second look) still finds the question unanswered, and must not ask again.
// The interleaving is made, not hoped for: the answer's write waits until such a look is done.
import { describe, expect, it } from 'vitest';
import { ClusterPermissions } from '../../src/actors/cluster-permissions.js';
import { PostgresClusterQuestions } from '../../src/adapters/storage/postgres/postgres-cluster-questions.js';
import type { ClusterAnswer, ClusterQuestions, QuestionsSeen } from '../../src/ports/cluster-questions.js';
import type { PermissionQuestion } from '../../src/domain/permission.js';
import { migratedPool, usePostgresServer } from '../support/postgres-server.js';
import { eventually } from '../support/test-hall.js';

const server = usePostgresServer();

const QUESTION: PermissionQuestion = {
  type: 'ask',
  id: 'p1',
  tool: 'bash',
  input: { command: 'echo 1' },
  title: 'echo 1',
  kind: 'execute',
  reason: 'bash is not allowed by a rule',
};

/** The real store, but its answer's write waits until one look that began after the answer was given has ended. */
class AnswerAfterALook implements ClusterQuestions {
  private lookEnded: (() => void) | null = null;
  private ring: (() => void) | null = null;
  constructor(private readonly real: PostgresClusterQuestions) {}
  onDoorbell = (listener: () => void): void => {
    this.ring = listener;
  };
  serve = (binding: string) => this.real.serve(binding);
  unserve = (binding: string) => this.real.unserve(binding);
  servedElsewhere = (binding: string) => this.real.servedElsewhere(binding);
  ask: ClusterQuestions['ask'] = (question) => this.real.ask(question);
  async look(bindings: readonly string[], watched: readonly string[]): Promise<QuestionsSeen> {
    const ended = this.lookEnded;
    this.lookEnded = null;
    const seen = await this.real.look(bindings, watched);
    // The look's result is handled when this resolves; the write goes on after that.
    if (ended) setImmediate(ended);
    return seen;
  }
  async answer(id: string, answer: ClusterAnswer): Promise<boolean> {
    await new Promise<void>((resolve) => {
      this.lookEnded = resolve;
      this.ring?.();
    });
    return this.real.answer(id, answer);
  }
}

describe('a question of another hall, answered here', () => {
  it('is put to the handler here once, also when a look comes while the answer is being written', async () => {
    const url = await server.freshDatabase();
    const pool = await migratedPool(url, 4);
    const here = new AnswerAfterALook(new PostgresClusterQuestions(pool, 'c1', 'hall-a', 'c1_doorbell'));
    const permissions = new ClusterPermissions(here, here.onDoorbell, 10_000, () => undefined);
    try {
      const asked: string[] = [];
      permissions.answerWith((binding) =>
        binding === 'acp:s1'
          ? async (question) => {
              asked.push(question.title);
              return { type: 'answer', id: question.id, answer: 'once', reason: 'allowed by a person', face: 'acp' };
            }
          : undefined,
      );
      await permissions.serve('acp:s1');
      // The other hall asks, as its run's handler does.
      const there = new PostgresClusterQuestions(pool, 'c1', 'hall-b', 'c1_doorbell');
      await there.ask({ id: 'q1', runId: 'bjorn-1', binding: 'acp:s1', question: QUESTION });
      await eventually(async () => {
        const seen = await there.look([], ['q1']);
        expect(seen.settled.get('q1')).toMatchObject({ answer: 'once', face: 'acp' });
      }, 10_000);
      // The looks after the write find it answered: still asked only once.
      await eventually(async () => expect((await here.look(['acp:s1'], [])).open).toEqual([]), 5_000);
      expect(asked).toEqual(['echo 1']);
    } finally {
      permissions.stop();
      await pool.end();
    }
  });
});
