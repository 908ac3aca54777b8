// @dte/webhooks as a library: what the api's /webhooks routes and the tests use. The service
// itself starts from main.ts.
export * from './clock';
export * from './envelope';
export * from './signature';
export * from './url-policy';
export * from './test-mode';
export * from './model';
export * from './subscriptions';
export { USER_AGENT } from './http-delivery';
export { signingSecret } from './pg-store';
