/**
 * @dte/es-cl: what index.js (the one source, plain JavaScript with JSDoc types, also served to the
 * dashboard's browser pages) exports, for TypeScript. Keep it in step with index.js: the test
 * compares the module's exports with this list.
 */

/** Chile's time zone: instants are shown in it, "today" is its date. */
export declare const ZONA: 'America/Santiago';
/** An amount in pesos: $23.800. */
export declare function clp(n: unknown): string;
/** A whole number with es-CL thousands: 1.234. */
export declare function entero(n: unknown): string;
/** A calendar date (YYYY-MM-DD) as dd-mm-aaaa; '—' when empty; anything else as given. */
export declare function dia(ymd: string | null | undefined): string;
/** A date typed as dd-mm-aaaa (d-m-aaaa, slashes) as YYYY-MM-DD; null when not a real date. */
export declare function diaApi(typed: string): string | null;
/** An instant as dd-mm-aaaa hh:mm in Chile's time; '—' when empty; an unreadable one as given. */
export declare function fecha(iso: string | Date | null | undefined): string;
/** The months in Spanish, January first. */
export declare const MESES: readonly string[];
/** A month (YYYY-MM) in words: "noviembre de 2026"; anything else as given. */
export declare function mes(periodo: string): string;
/** Today in Chile as YYYY-MM-DD. */
export declare function hoy(): string;
