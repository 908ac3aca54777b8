/**
 * A worker writing, in the statement that does its work, the status that work gives a document
 * (the read model's status columns of `dtes` and the events feed `dte_events`), instead of leaving
 * both to the projector: one update of the document row instead of two, and no projector
 * transaction for that record. The dte-status record is still written to the outbox (webhooks,
 * rcv-sync and any other consumer hear it as before), with the header `x-status-applied-from`
 * (`<status> <observed_at>` of the status it replaced) when, and only when, the statement applied
 * it: the projector then skips the record (it only records the stage duration); without the
 * header (the document was not in a status the record always replaces, or a worker of an older
 * version wrote the record) the projector applies it by shouldApply as any other.
 *
 * The statement moves a document only from the statuses `statusesReplacedBy` (@dte/status) lists
 * for the new status, and only when the document's current observation is not newer than the
 * record's: exactly the cases in which shouldApply replaces it, so the outcome is the projector's.
 * The feed then gets the event: a document in such a status has no event of the new status and no
 * later event (the feed's events are the applied ones and older ones), so the projector would
 * insert it too.
 */
import type { DteStatusValue } from './pipeline-outbox';

/** The Kafka header that says a dte-status record was applied by the statement that wrote it. */
export const STATUS_APPLIED_FROM_HEADER = 'x-status-applied-from';

/** The status a record's writer replaced, from its headers; null when it applied nothing. */
export function statusAppliedFrom(
  headers: Record<string, string> | undefined,
): { sii_status: string; observed_at: Date } | null {
  const v = headers?.[STATUS_APPLIED_FROM_HEADER];
  if (!v) return null;
  const cut = v.indexOf(' ');
  const at = new Date(v.slice(cut + 1));
  if (cut <= 0 || Number.isNaN(at.getTime())) return null;
  return { sii_status: v.slice(0, cut), observed_at: at };
}

/**
 * The parts of a worker's statement that apply its status records `recs` itself (records of
 * documents the statement updates, and only those):
 * - `ctes`: CTEs to place after `rows` (a CTE of the documents the statement locked and changes,
 *   with their `id`, `sii_status` and `observed_at`): `own_moved` (one row per record applied, the
 *   record's columns with the replaced `from_status`/`from_at`) and the feed's insert;
 * - `set(alias, except)`: the SET list that moves the status columns (but those in `except`, which
 *   the worker sets itself) of the row joined (LEFT JOIN) to `own_moved` as `alias` (unchanged
 *   where there is none), for the worker's own UPDATE of the row (a row is updated once per
 *   statement); the track id is taken only when the row has none, as the projector does;
 * - `headers`: outboxInsertSql's `headers` option, that adds the header to the records applied (a
 *   hash join with `own_moved`, not a lookup per outbox row: an envelope's statement writes
 *   hundreds);
 * - `params`, numbered from `firstParam`.
 * `replaces(status)`: the statuses a record of that status replaces (statusesReplacedBy). At most
 * one record per document: a worker with several for one document passes the last.
 */
export function ownStatusWriteSql(
  recs: DteStatusValue[],
  opts: { firstParam: number; rows: string; replaces: (status: string) => readonly string[] },
): {
  ctes: string;
  set: (alias: string, except?: string[]) => string;
  headers: { join: string; sql: string };
  params: unknown[];
} {
  const p = (i: number, type: string) => `$${opts.firstParam + i}::${type}[]`;
  return {
    ctes: `own_status AS (
   SELECT * FROM unnest(${p(0, 'uuid')}, ${p(1, 'text')}, ${p(2, 'text')}, ${p(3, 'text')}, ${p(4, 'text')},
                        ${p(5, 'text')}, ${p(6, 'timestamptz')}, ${p(7, 'text')})
     AS v(dte_id, event_id, sii_status, glosa, track_id, source, observed_at, replaces)
 ), own_moved AS MATERIALIZED (
   SELECT s.*, l.sii_status AS from_status, l.observed_at AS from_at
     FROM own_status s JOIN ${opts.rows} l ON l.id = s.dte_id
    WHERE l.sii_status = ANY(string_to_array(s.replaces, ' ')) AND l.observed_at <= s.observed_at
 ), own_feed AS (
   INSERT INTO dte_events (dte_id, event_id, sii_status, glosa, track_id, source, observed_at)
   SELECT dte_id, event_id, sii_status, glosa, track_id, source, observed_at FROM own_moved ORDER BY dte_id
   ON CONFLICT (event_id) DO NOTHING
 )`,
    set: (a, except = []) =>
      [
        `sii_status = COALESCE(${a}.sii_status, dtes.sii_status)`,
        `sii_glosa = CASE WHEN ${a}.dte_id IS NULL THEN dtes.sii_glosa ELSE ${a}.glosa END`,
        `observed_at = COALESCE(${a}.observed_at, dtes.observed_at)`,
        `track_id = COALESCE(dtes.track_id, ${a}.track_id)`,
      ]
        .filter((x) => !except.some((c) => x.startsWith(`${c} =`)))
        .join(', '),
    headers: {
      join: 'LEFT JOIN own_moved om ON om.event_id = v.e',
      sql: `CASE WHEN om.event_id IS NULL THEN h::jsonb
                 ELSE COALESCE(h::jsonb, '{}'::jsonb) || jsonb_build_object('${STATUS_APPLIED_FROM_HEADER}',
                        om.from_status || ' ' || (to_json(om.from_at) #>> '{}')) END`,
    },
    params: [
      recs.map((r) => r.dte_id),
      recs.map((r) => r.event_id),
      recs.map((r) => r.sii_status),
      recs.map((r) => r.sii_glosa),
      recs.map((r) => r.track_id),
      recs.map((r) => r.source),
      recs.map((r) => r.observed_at),
      recs.map((r) => opts.replaces(r.sii_status).join(' ')),
    ],
  };
}
