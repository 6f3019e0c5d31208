package agentregistry

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Registry is the orchestrator's view of its agents, as the static registry file gave it.
// Two implementations answer it the same way for the same fleet: FileRegistry (LoadFile)
// reads the file, LiveRegistry (NewLiveRegistry) mirrors the live registry. Answers never
// touch the network, so neither needs a context. Returned specs are shared: do not modify.
type Registry interface {
	// Route returns the best ready agent with the skill (a capability of that name).
	Route(skillID string) (AgentSpec, error)
	// RouteByScore scores every ready agent as PROTOCOL.md's route does and returns the best.
	RouteByScore(req RoutingRequest) (RouteResult, error)
	// FindBySkill returns the agents with a capability named skillID, ordered by agent_type.
	FindBySkill(skillID string) []AgentSpec
	// FindByTag returns the agents with a capability tagged tag, ordered by agent_type.
	FindByTag(tag string) []AgentSpec
	// FindByName returns the agent of that agent_type.
	FindByName(name string) (AgentSpec, bool)
	// All returns every agent, ordered by agent_type.
	All() []AgentSpec
}

// RoutingRequest is what RouteByScore matches: at least one field must be set.
type RoutingRequest struct {
	SkillID          string
	Tags             []string
	PreferredRuntime string
}

// RouteResult is the winner of a route, its score and every candidate above zero, best first.
type RouteResult struct {
	Agent      AgentSpec
	Score      float64
	Candidates []RouteCandidate
}

// The weights of PROTOCOL.md's route scoring.
const (
	scoreSkill   = 1.0
	scoreTag     = 0.5
	scoreRuntime = 0.1
	maxWeight    = 1000
)

// fleetEntry is one agent as the scoring sees it.
type fleetEntry struct {
	spec  AgentSpec
	ready bool
	// order is the registration order (file position, or registered_at in ms); ties go to
	// the smaller order, then to the smaller agent_type, as the registry breaks them.
	order  int64
	skills map[string]struct{}
	tags   map[string]struct{}
}

func newFleetEntry(spec AgentSpec, ready bool, order int64) *fleetEntry {
	e := &fleetEntry{spec: spec, ready: ready, order: order, skills: map[string]struct{}{}, tags: map[string]struct{}{}}
	for _, c := range spec.Capabilities {
		e.skills[c.Name] = struct{}{}
		for _, t := range c.Tags {
			e.tags[t] = struct{}{}
		}
	}
	return e
}

// fleet is an immutable set of agents, sorted by agent_type, with the answers of Registry.
type fleet struct {
	entries []*fleetEntry
	byName  map[string]*fleetEntry
}

func newFleet(entries []*fleetEntry) *fleet {
	slices.SortFunc(entries, func(a, b *fleetEntry) int { return strings.Compare(a.spec.AgentType, b.spec.AgentType) })
	f := &fleet{entries: entries, byName: make(map[string]*fleetEntry, len(entries))}
	for _, e := range entries {
		f.byName[e.spec.AgentType] = e
	}
	return f
}

func (f *fleet) route(skillID string) (AgentSpec, error) {
	r, err := f.routeByScore(RoutingRequest{SkillID: skillID})
	return r.Agent, err
}

func (f *fleet) routeByScore(req RoutingRequest) (RouteResult, error) {
	tags := make([]string, 0, len(req.Tags))
	seen := map[string]struct{}{}
	for _, t := range req.Tags {
		if _, dup := seen[t]; t != "" && !dup {
			seen[t] = struct{}{}
			tags = append(tags, t)
		}
	}
	if req.SkillID == "" && req.PreferredRuntime == "" && len(tags) == 0 {
		return RouteResult{}, &Error{Code: CodeInvalidRequest, Message: "route needs at least one of skill, tags, preferred_runtime"}
	}
	type scored struct {
		e     *fleetEntry
		score float64
	}
	var out []scored
	for _, e := range f.entries {
		if !e.ready {
			continue
		}
		raw := 0.0
		if _, ok := e.skills[req.SkillID]; ok && req.SkillID != "" {
			raw += scoreSkill
		}
		for _, t := range tags {
			if _, ok := e.tags[t]; ok {
				raw += scoreTag
			}
		}
		if req.PreferredRuntime != "" && e.spec.Runtime == req.PreferredRuntime {
			raw += scoreRuntime
		}
		if s := roundScore(raw * routingWeight(e.spec.Weight)); s > 0 {
			out = append(out, scored{e, s})
		}
	}
	if len(out) == 0 {
		return RouteResult{}, &Error{Code: CodeNoRoute, Message: describeNoRoute(req.SkillID, tags, req.PreferredRuntime)}
	}
	// The order is total (agent types are unique), so an unstable sort is deterministic.
	slices.SortFunc(out, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := cmp.Compare(a.e.order, b.e.order); c != 0 {
			return c
		}
		return strings.Compare(a.e.spec.AgentType, b.e.spec.AgentType)
	})
	res := RouteResult{Agent: out[0].e.spec, Score: out[0].score, Candidates: make([]RouteCandidate, len(out))}
	for i, s := range out {
		res.Candidates[i] = RouteCandidate{AgentType: s.e.spec.AgentType, Score: s.score}
	}
	return res, nil
}

func (f *fleet) find(match func(*fleetEntry) bool) []AgentSpec {
	var out []AgentSpec
	for _, e := range f.entries {
		if match(e) {
			out = append(out, e.spec)
		}
	}
	return out
}

func (f *fleet) findBySkill(skill string) []AgentSpec {
	return f.find(func(e *fleetEntry) bool { _, ok := e.skills[skill]; return ok })
}

func (f *fleet) findByTag(tag string) []AgentSpec {
	return f.find(func(e *fleetEntry) bool { _, ok := e.tags[tag]; return ok })
}

func (f *fleet) findByName(name string) (AgentSpec, bool) {
	if e, ok := f.byName[name]; ok {
		return e.spec, true
	}
	return AgentSpec{}, false
}

func (f *fleet) all() []AgentSpec { return f.find(func(*fleetEntry) bool { return true }) }

// roundScore keeps six decimals, as the registry does, so 0.5+0.1 ties stay ties.
func roundScore(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// routingWeight is the spec's weight, 1 when unset, capped at the registry's bound.
func routingWeight(w float64) float64 {
	if w > 0 {
		return math.Min(w, maxWeight)
	}
	return 1
}

func describeNoRoute(skill string, tags []string, runtime string) string {
	var parts []string
	if skill != "" {
		parts = append(parts, fmt.Sprintf("skill %q", skill))
	}
	if len(tags) > 0 {
		quoted := make([]string, len(tags))
		for i, t := range tags {
			quoted[i] = fmt.Sprintf("%q", t)
		}
		parts = append(parts, "tags ["+strings.Join(quoted, ",")+"]")
	}
	if runtime != "" {
		parts = append(parts, fmt.Sprintf("runtime %q", runtime))
	}
	return "no ready agent matches " + strings.Join(parts, ", ")
}
