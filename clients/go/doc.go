// Package agentregistry is the Go client of agent-registry, the NATS-native registry for
// fleets of AI agents. It speaks the wire protocol of PROTOCOL.md over nats.go:
//
//   - Client sends every query (lookup, get, list, route, find, ...) and write, scoped to a
//     tenant when asked, with min_revision and iterators over paged lists;
//   - Agent registers an instance, heartbeats, serves its tasks and leaves cleanly;
//   - Registry is the orchestrator's interface of the static registry file (Route,
//     RouteByScore, FindBySkill, FindByTag, FindByName, All), answered by FileRegistry from
//     the file or by LiveRegistry from a local view of the live registry.
//
// Refusals are *Error values carrying the protocol's code, message and issues.
package agentregistry
