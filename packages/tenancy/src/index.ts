export * from './branches';
export * from './companies';
export * from './deps';
export * from './principal';
export * from './production-gates';
export * from './rut';
export * from './scope-words';
export * from './scopes';
