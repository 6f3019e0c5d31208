/**
 * deploy/nats/auth.conf as the tests run it: its text, each user's password, each user's
 * private inbox prefix, and clients connected as its users. One place, so a test of a role's
 * permissions reads the same file the operators deploy.
 */
import { readFileSync } from "node:fs";
import type { NatsConnection } from "@nats-io/nats-core";
import { connect, RegistryClient } from "../../src/client/index.js";

export const AUTH_CONF = readFileSync(new URL("../../deploy/nats/auth.conf", import.meta.url), "utf8");

/** Each user's password as a config's `users` block writes it. */
export const passwordsOf = (conf: string): Map<string, string> =>
  new Map([...conf.matchAll(/user:\s*"([^"]+)",\s*password:\s*"([^"]+)"/g)].map((m) => [m[1] as string, m[2] as string]));

const PASSWORDS = passwordsOf(AUTH_CONF);

/** A user's password in auth.conf ("" for a user it does not name, which the server refuses). */
export const authPassword = (user: string): string => PASSWORDS.get(user) ?? "";

/** The inbox prefix auth.conf lets a user subscribe to: `_INBOX_<agent type>` for an agent, `_INBOX_<user>` for the others. */
export const inboxOf = (user: string): string => `_INBOX_${user.startsWith("agent-") ? user.slice("agent-".length) : user}`;

/** The environment the CLI runs with as the operator. */
export const operatorCliEnv = (natsUrl: string): Record<string, string> => ({
  NATS_URL: natsUrl,
  NATS_USER: "operator",
  NATS_PASSWORD: authPassword("operator"),
  NATS_INBOX_PREFIX: inboxOf("operator"),
});

/** Clients of one server connected as auth.conf's users; `close` closes every connection made. */
export class AuthConfUsers {
  readonly conns: NatsConnection[] = [];

  constructor(private readonly url: () => string) {}

  async connect(user: string): Promise<NatsConnection> {
    const nc = await connect({ servers: this.url(), user, pass: authPassword(user), inboxPrefix: inboxOf(user) });
    this.conns.push(nc);
    return nc;
  }

  /** A RegistryClient as `user`, of `tenant` when given. */
  async as(user: string, tenant?: string): Promise<RegistryClient> {
    return new RegistryClient(await this.connect(user), tenant !== undefined ? { tenant } : {});
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.conns.map((nc) => nc.close()));
  }
}
