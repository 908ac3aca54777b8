/** The prefix of every route of the REST API (the spec's base path). */
export const BASE_PATH = '/api/v1';
