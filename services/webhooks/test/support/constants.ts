// Literal values of the spec, written out here so tests do not take them from the code under test.
export const SIGNATURE_HEADER = 'Service-Signature';
export const USER_AGENT_FOR_TESTS = 'Service-Webhooks/1.0';
