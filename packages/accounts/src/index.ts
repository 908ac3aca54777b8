/**
 * @dte/accounts: who uses the dashboard. Passwords (scrypt), Redis sessions, the login guard
 * (rate limit and lockout), organizations and their onboarding (RUT, SII situation), access
 * requests decided by owners, the operator's production enablement and the audit log.
 * HTTP lives in services/api (routes/accounts.ts, routes/organizations.ts); see README.md.
 */
export * from './password';
export * from './sessions';
export * from './login-guard';
export * from './audit';
export * from './users';
export * from './organizations';
export * from './members';
export * from './plans';
export * from './rate-limit-setting';
export * from './control-proof';
export * from './user-tokens';
