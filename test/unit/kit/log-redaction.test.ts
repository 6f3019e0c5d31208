import { describe, expect, it } from "vitest";
import { isSecretParam, redactUrl } from "../../../src/kit/log-redaction.js";

describe("redactUrl", () => {
  it("replaces the web page's token in a request path and keeps the rest as written", () => {
    expect(redactUrl("/ui/events?recent=200&token=s3cret")).toBe("/ui/events?recent=200&token=[redacted]");
    expect(redactUrl("/ui/events?token=s3cret&agent=billing&types=agent.registered,agent.evicted")).toBe(
      "/ui/events?token=[redacted]&agent=billing&types=agent.registered,agent.evicted",
    );
  });

  it("replaces every parameter that carries a credential, however it is spelled", () => {
    const secrets = ["token", "access_token", "refresh-token", "sessionToken", "password", "passwd", "pwd", "key", "api_key", "apiKey", "client_secret", "secret", "auth", "authorization", "jwt", "sig", "signature", "credentials", "TOKEN", "%74oken", "token[]"];
    for (const name of secrets) {
      expect(isSecretParam(name), name).toBe(true);
      expect(redactUrl(`/mcp?${name}=s3cret&x=1`), name).toBe(`/mcp?${name}=[redacted]&x=1`);
    }
  });

  it("keeps the parameters the servers take that are not credentials", () => {
    for (const name of ["recent", "since", "agent", "types", "heartbeats", "last_event_id", "cursor", "limit", "status", "kind", "q"]) {
      expect(isSecretParam(name), name).toBe(false);
    }
    const path = "/ui/api/agents?status=ready&kind=agent&cursor=abc%3D&limit=2";
    expect(redactUrl(path)).toBe(path);
    expect(redactUrl("/healthz")).toBe("/healthz");
    expect(redactUrl("/")).toBe("/");
    expect(redactUrl("")).toBe("");
  });

  it("replaces every occurrence, empty values and parameters in a fragment", () => {
    expect(redactUrl("/ui/?token=a&token=b&token=")).toBe("/ui/?token=[redacted]&token=[redacted]&token=[redacted]");
    expect(redactUrl("/ui/?token")).toBe("/ui/?token");
    expect(redactUrl("https://h/cb#access_token=s3cret&state=x")).toBe("https://h/cb#access_token=[redacted]&state=x");
    // The value never leaks through an odd separator inside it.
    expect(redactUrl("/ui/events?token=a?b=c#d")).toBe("/ui/events?token=[redacted]#d");
  });

  it("replaces an absolute URL's password, or its whole user info when it is a token", () => {
    expect(redactUrl("postgres://audit:pw@db:5432/audit?sslmode=require")).toBe("postgres://audit:[redacted]@db:5432/audit?sslmode=require");
    expect(redactUrl("nats://registry:p@ss@nats-1:4222")).toBe("nats://registry:[redacted]@nats-1:4222");
    expect(redactUrl("nats://s3cret@nats-1:4222")).toBe("nats://[redacted]@nats-1:4222");
    expect(redactUrl("nats://nats-1:4222")).toBe("nats://nats-1:4222");
    // An @ after the authority is not user info.
    expect(redactUrl("http://h/a@b?x=1")).toBe("http://h/a@b?x=1");
  });
});
