/**
 * The cron part of the configuration check the schema cannot do: whether
 * each expression can be scheduled. A bad one is a configuration error that
 * names the file, the key and the job; the hall refuses to start.
 */
import { cronProblem, type CronSpec } from './cron-schedule.js';

export interface CronJobSpec extends CronSpec {
  id: string;
}

export function cronConfigErrors(jobs: readonly CronJobSpec[], file: string): string[] {
  const errors: string[] = [];
  jobs.forEach((job, i) => {
    const problem = cronProblem(job);
    if (problem !== null) {
      errors.push(
        `${file}: cron[${i}].cron: job ${JSON.stringify(job.id)}: invalid cron expression ${JSON.stringify(job.cron)}: ${problem}`,
      );
    }
  });
  return errors;
}
