/**
 * The cron part of the configuration check the schema cannot do: whether
 * each expression can be scheduled and each job has a mission to send. A
 * job that cannot work is a configuration error that names the file, the
 * key and the job; the hall refuses to start rather than fail at every tick.
 */
import { cronProblem, type CronSpec } from './cron-schedule.js';

export interface CronJobSpec extends CronSpec {
  id: string;
  mission: string;
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
    if (job.mission.trim() === '') {
      errors.push(
        `${file}: cron[${i}].mission: job ${JSON.stringify(job.id)} has no mission: write the text each run is given, e.g. mission: 'check the nightly build'`,
      );
    }
  });
  return errors;
}
