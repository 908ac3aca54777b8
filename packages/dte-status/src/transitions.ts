import { KNOWN_STATUSES, classify, stageOf } from './classification';

/** What a consumer knows of a document's status: the code and when it was observed. */
export interface StatusObservation {
  sii_status: string;
  /** ISO-8601 instant of the transition */
  observed_at: string;
}

/**
 * The no-going-backwards rule every consumer of dte-status applies, so replays and
 * out-of-order delivery never move a document backwards:
 * - a terminal status is final: nothing replaces it;
 * - otherwise a newer observation replaces an older one, except that it may not go to an
 *   earlier stage (a late "sending" never overwrites "SOK"). The one way back is from a
 *   requiere_accion outcome (stuck, sin_permiso_sii) to polling, which refresh-status causes:
 *   it is newer and its stage is not lower, so it passes the same rule;
 * - an observation with the same instant replaces the current one only if it is of a later
 *   stage (so a replay of the same message is a no-op).
 */
export function shouldApply(current: StatusObservation | null | undefined, next: StatusObservation): boolean {
  if (!current) return true;
  if (current.sii_status === next.sii_status && current.observed_at === next.observed_at) return false;
  if (classify(current.sii_status).terminal) return false;
  const nextStage = stageOf(next.sii_status);
  const currentStage = stageOf(current.sii_status);
  if (classify(next.sii_status).terminal) return true;
  const cmp = Date.parse(next.observed_at) - Date.parse(current.observed_at);
  if (Number.isNaN(cmp)) throw new Error(`invalid observed_at: ${current.observed_at} / ${next.observed_at}`);
  if (nextStage < currentStage) return false;
  if (cmp > 0) return true;
  if (cmp === 0) return nextStage > currentStage;
  return false;
}

/**
 * The statuses that an observation of `next` replaces under shouldApply whenever it is not older
 * than the current one: those not terminal and of an earlier stage. A worker that writes a
 * document's status in the statement that does its work (instead of leaving it to the projector)
 * moves the document only from these, and only when the current observation is not newer.
 */
export function statusesReplacedBy(next: string): string[] {
  const stage = stageOf(next);
  return KNOWN_STATUSES.filter((s) => !classify(s).terminal && stageOf(s) < stage);
}
