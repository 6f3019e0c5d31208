/**
 * What NATS itself sets, for whoever sizes a reply before the connection says otherwise.
 */

/** nats-server's default max_payload (1 MiB): the bound of a reply when the server's INFO gives none. */
export const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
