/**
 * What a run writes on its hall's host (its events file, its lines of the
 * slot log), kept in `raider_hall_run_output` as the bytes appended, piece by
 * piece, so `attach` and `logs` on another hall of a shared cluster can show
 * it. Pieces start where the previous one ended; a piece written twice (a
 * retry) is written once.
 */
import type pg from 'pg';
import { z } from 'zod';
import type { OutputPiece, OutputStream, RunOutputs } from '../../../ports/cluster-queue.js';

const SHIP = `INSERT INTO raider_hall_run_output (cluster, run_id, stream, start, data, hall)
SELECT $1, p.run_id, p.stream, p.start, p.data, $2
FROM unnest($3::text[], $4::text[], $5::bigint[], $6::bytea[]) AS p(run_id, stream, start, data)
ON CONFLICT (cluster, run_id, stream, start) DO NOTHING`;

const pieceRow = z.object({ start: z.union([z.string(), z.number()]), data: z.instanceof(Buffer) });

export class PostgresRunOutputs implements RunOutputs {
  constructor(
    private readonly pool: pg.Pool,
    private readonly cluster: string,
    private readonly hallId: string,
  ) {}

  async ship(pieces: readonly OutputPiece[]): Promise<void> {
    if (pieces.length === 0) return;
    await this.pool.query(SHIP, [
      this.cluster,
      this.hallId,
      pieces.map((p) => p.runId),
      pieces.map((p) => p.stream),
      pieces.map((p) => p.start),
      pieces.map((p) => p.data),
    ]);
  }

  async read(runId: string, stream: OutputStream, from: number): Promise<Buffer | null> {
    const result = await this.pool.query(
      `SELECT start, data FROM raider_hall_run_output WHERE cluster = $1 AND run_id = $2 AND stream = $3
       AND start + octet_length(data) > $4 ORDER BY start`,
      [this.cluster, runId, stream, from],
    );
    if (result.rows.length === 0) {
      const any = await this.pool.query('SELECT 1 FROM raider_hall_run_output WHERE cluster = $1 AND run_id = $2 LIMIT 1', [
        this.cluster,
        runId,
      ]);
      return any.rows.length === 0 ? null : Buffer.alloc(0);
    }
    const parts: Buffer[] = [];
    let at = from;
    for (const raw of result.rows) {
      const row = pieceRow.parse(raw);
      const start = Number(row.start);
      if (start > at) break; // a gap: the rest comes with the piece that fills it
      parts.push(row.data.subarray(at - start));
      at = start + row.data.length;
    }
    return Buffer.concat(parts);
  }

  async shippedBy(runId: string): Promise<string | null> {
    const result = await this.pool.query<{ hall: string }>(
      'SELECT hall FROM raider_hall_run_output WHERE cluster = $1 AND run_id = $2 LIMIT 1',
      [this.cluster, runId],
    );
    return result.rows[0]?.hall ?? null;
  }

  /** Output older than a day leaves the table. */
  async prune(): Promise<void> {
    await this.pool.query("DELETE FROM raider_hall_run_output WHERE cluster = $1 AND at < now() - interval '1 day'", [this.cluster]);
  }
}
