import type { Clock } from './clock';
import type { DueAttempt } from './model';

/** Puts a due attempt where it will be picked up at due_at (a retry topic, or a local timer). */
export interface AttemptScheduler {
  /** `tier` is the 0-based delay tier for retries, or null for an immediate first attempt */
  schedule(attempt: DueAttempt, tier: number | null): Promise<void>;
}

/**
 * In-process scheduler: a timer per attempt that hands it to `run` at due_at. For tests and for
 * a single process without Kafka; nothing survives a restart except through the store's
 * overdue sweep, which picks up every pending delivery whose attempt is past due.
 */
export class TimerScheduler implements AttemptScheduler {
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly clock: Clock,
    private readonly run: (attempt: DueAttempt) => void,
  ) {}

  get pending(): number {
    return this.timers.size;
  }

  async schedule(attempt: DueAttempt): Promise<void> {
    const due = Date.parse(attempt.due_at);
    const arm = () => {
      // timers may fire a millisecond early: never hand over an attempt before it is due
      const timer = setTimeout(
        () => {
          this.timers.delete(timer);
          if (this.clock.now() < due) arm();
          else this.run(attempt);
        },
        Math.max(0, due - this.clock.now()),
      );
      this.timers.add(timer);
    };
    arm();
  }

  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
