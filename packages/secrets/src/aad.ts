/**
 * What each sealed secret is bound to (the AAD of both encryption layers): a sealed value copied
 * onto another row, or used as another part, does not open.
 */
export const certificateAad = (certificateId: string, part: 'p12' | 'password'): string =>
  `certificate:${certificateId}:${part}`;

export const cafKeyAad = (cafId: string): string => `caf:${cafId}:rsask`;

/** a webhook subscription's HMAC signing secret */
export const webhookSecretAad = (subscriptionId: string): string => `webhook:${subscriptionId}:secret`;
