/**
 * Permission questions across the halls of a shared cluster on PostgreSQL
 * (migration 006, docs/cluster.md "ACP across halls"): `raider_hall_answerers`
 * says which hall answers for a binding, `raider_hall_questions` holds the
 * questions and their first answers. Every write rings the cluster's
 * doorbell (NOTIFY), so the other halls look at once.
 */
import type pg from 'pg';
import { z } from 'zod';
import { parseQuestion } from '../../../domain/permission.js';
import type { ClusterAnswer, ClusterQuestion, ClusterQuestions, QuestionsSeen } from '../../../ports/cluster-questions.js';

/** A hall answers for a binding while its lease lives. */
const LIVE_ANSWERER = `EXISTS (SELECT 1 FROM raider_hall_answerers a JOIN raider_hall_halls h ON h.cluster = a.cluster AND h.id = a.hall
  WHERE a.cluster = q.cluster AND a.binding = q.binding AND h.lease_until > now())`;

const LOOK = `SELECT q.id, q.run_id, q.binding, q.hall, q.question, q.answer, ${LIVE_ANSWERER} AS served
FROM raider_hall_questions q
WHERE q.cluster = $1 AND ((q.answer IS NULL AND q.binding = ANY($2) AND q.hall <> $3) OR q.id = ANY($4))`;

/** Answered questions stay this long, so the halls watching them see how they ended. */
const ANSWERED_KEEP = '1 minute';

const answerSchema = z.object({
  answer: z.enum(['once', 'session', 'no']),
  reason: z.string(),
  face: z.enum(['acp', 'dashboard', 'socket', 'telegram', 'timeout']).optional(),
});
const lookRow = z.object({
  id: z.string(),
  run_id: z.string(),
  binding: z.string(),
  hall: z.string(),
  question: z.unknown(),
  answer: z.unknown(),
  served: z.boolean(),
});

export class PostgresClusterQuestions implements ClusterQuestions {
  constructor(
    private readonly pool: pg.Pool,
    private readonly cluster: string,
    private readonly hallId: string,
    private readonly channel: string,
  ) {}

  async serve(binding: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO raider_hall_answerers (cluster, binding, hall) VALUES ($1, $2, $3)
       ON CONFLICT (cluster, binding) DO UPDATE SET hall = EXCLUDED.hall, since = now()`,
      [this.cluster, binding, this.hallId],
    );
  }

  async unserve(binding: string): Promise<void> {
    await this.pool.query('DELETE FROM raider_hall_answerers WHERE cluster = $1 AND binding = $2 AND hall = $3', [
      this.cluster,
      binding,
      this.hallId,
    ]);
  }

  async servedElsewhere(binding: string): Promise<boolean> {
    const result = await this.pool.query(
      `SELECT 1 FROM raider_hall_answerers a JOIN raider_hall_halls h ON h.cluster = a.cluster AND h.id = a.hall
       WHERE a.cluster = $1 AND a.binding = $2 AND a.hall <> $3 AND h.lease_until > now()`,
      [this.cluster, binding, this.hallId],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async ask(question: Omit<ClusterQuestion, 'hall'>): Promise<void> {
    await this.pool.query(
      `WITH asked AS (INSERT INTO raider_hall_questions (cluster, id, run_id, binding, hall, question)
         VALUES ($1, $2, $3, $4, $5, $6::jsonb) ON CONFLICT (cluster, id) DO NOTHING RETURNING 1)
       SELECT pg_notify($7, '') FROM asked`,
      [this.cluster, question.id, question.runId, question.binding, this.hallId, JSON.stringify(question.question), this.channel],
    );
  }

  async answer(id: string, answer: ClusterAnswer): Promise<boolean> {
    const result = await this.pool.query(
      `WITH answered AS (UPDATE raider_hall_questions SET answer = $3::jsonb, answered_at = now()
         WHERE cluster = $1 AND id = $2 AND answer IS NULL RETURNING 1)
       SELECT pg_notify($4, '') FROM answered`,
      [this.cluster, id, JSON.stringify(answer), this.channel],
    );
    return (result.rowCount ?? 0) > 0;
  }

  async look(bindings: readonly string[], watched: readonly string[]): Promise<QuestionsSeen> {
    const seen: QuestionsSeen = { open: [], settled: new Map(), orphaned: new Set() };
    if (bindings.length === 0 && watched.length === 0) return seen;
    const result = await this.pool.query(LOOK, [this.cluster, [...bindings], this.hallId, [...watched]]);
    const found = new Set<string>();
    for (const raw of result.rows) {
      const row = lookRow.parse(raw);
      found.add(row.id);
      const answer = row.answer === null ? null : answerSchema.safeParse(row.answer);
      if (watched.includes(row.id)) {
        if (answer !== null) seen.settled.set(row.id, answer.success ? answer.data : null);
        else if (!row.served) seen.orphaned.add(row.id);
        continue;
      }
      const question = parseQuestion(row.question);
      if (answer === null && question) seen.open.push({ id: row.id, runId: row.run_id, binding: row.binding, hall: row.hall, question });
    }
    for (const id of watched) if (!found.has(id)) seen.settled.set(id, null);
    return seen;
  }

  /** Drops answered questions once the watchers had time to see them, and those of halls that left the cluster. */
  async prune(): Promise<void> {
    await this.pool.query(
      `DELETE FROM raider_hall_questions q WHERE q.cluster = $1 AND (q.answered_at < now() - interval '${ANSWERED_KEEP}'
         OR NOT EXISTS (SELECT 1 FROM raider_hall_halls h WHERE h.cluster = q.cluster AND h.id = q.hall))`,
      [this.cluster],
    );
  }

  /** This hall leaves (or joins again): it answers for nothing. */
  async forget(db: pg.ClientBase | pg.Pool): Promise<void> {
    await db.query('DELETE FROM raider_hall_answerers WHERE cluster = $1 AND hall = $2', [this.cluster, this.hallId]);
  }
}
