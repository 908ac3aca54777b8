/**
 * @dte/reception: the purchases side. Received intercambio files read safely and verified
 * (`readReceivedXml`, `screenXml`), the legal 8-day window (`plazoLegal`), the cesión block
 * (`cesionBlock`), the register's words (`siiEstado`, `receptorEstado`, `registerOutcome`), the
 * RCV sync of one (company, env, period) (`syncPeriod`, `applyOwnStatus`, `duePeriods`) and the
 * inbox (`listInbox`, `storeReceived`, `recordInboxEvent`).
 */
export * from './safe-xml';
export * from './intercambio';
export * from './deadline';
export * from './cesion';
export * from './estados';
export * from './register-answers';
export * from './rcv-sync';
export * from './inbox';
export * from './rcv-read';
export * from './sii-time';
export * from './intercambio-thread';
export * from './exchange-replies';
export * from './exchange-store';
export * from './deps';
export * from './inbox-query';
export * from './rcv-requests';
export * from './register-eventos';
