/**
 * Bringing a binding's journal to this hall before its claimed mission runs,
 * patiently: a database that restarts refuses queries for a second or more,
 * and a run that started without the journal would start the binding's
 * session over (the chaos run saw exactly that: "the database system is
 * shutting down" while a hall claimed a binding's mission). So a failed pull
 * is tried again every `retryMs` for up to `patienceMs`; only then does the
 * run start the session over, as on one hall when a journal is missing.
 * If this hall's lease runs out meanwhile, the cluster gives its claims to
 * others and refuses the runs here when they try to start.
 */
import { errorMessage } from '../domain/error-message.js';

export interface PatientPull {
  /** One attempt to bring the journal (throws when the database cannot answer). */
  pull(): Promise<void>;
  /** True once the hall stops: no more attempts. */
  stopped(): boolean;
  log(line: string): void;
  patienceMs: number;
  retryMs: number;
}

/** Resolves true when the journal came, false when the run must start the session over. */
export async function pullPatiently(session: string, how: PatientPull): Promise<boolean> {
  const giveUpAt = Date.now() + how.patienceMs;
  for (let attempt = 1; ; attempt++) {
    try {
      await how.pull();
      if (attempt > 1) how.log(`brought the journal of session ${session} from the cluster at attempt ${attempt}`);
      return true;
    } catch (err) {
      const last = how.stopped() || Date.now() + how.retryMs > giveUpAt;
      if (last) {
        how.log(`cannot bring the journal of session ${session} from the cluster: ${errorMessage(err)}; its run starts the session over`);
        return false;
      }
      if (attempt === 1)
        how.log(
          `cannot bring the journal of session ${session} from the cluster yet (${errorMessage(err)}); trying again for up to ${how.patienceMs / 1000} s`,
        );
      await new Promise((resolve) => setTimeout(resolve, how.retryMs));
    }
  }
}
