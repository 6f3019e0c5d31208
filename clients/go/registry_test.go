package agentregistry_test

import (
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	ar "github.com/agent-registry/agent-registry/clients/go"
)

// answer is what an orchestrator reads of a spec; both implementations must agree on it.
type answer struct {
	AgentType, Version, Description, OwnerTeam, NATSSubject, ConsumerGroup, Runtime string
	ACPPort                                                                         int
	Weight                                                                          float64
	Capabilities                                                                    []capAnswer
}

type capAnswer struct {
	Name, Description string
	Tags, Examples    []string
}

func answerOf(s ar.AgentSpec) answer {
	a := answer{s.AgentType, s.Version, s.Description, s.OwnerTeam, s.NATSSubject, s.ConsumerGroup, s.Runtime, s.ACPPort, s.Weight, nil}
	for _, c := range s.Capabilities {
		a.Capabilities = append(a.Capabilities, capAnswer{c.Name, c.Description, c.Tags, c.Examples})
	}
	return a
}

func names(specs []ar.AgentSpec) []string {
	out := []string{}
	for _, s := range specs {
		out = append(out, s.AgentType)
	}
	return out
}

// routeCase is one orchestrator question with the answer the scoring must give.
type routeCase struct {
	name   string
	req    ar.RoutingRequest
	winner string // empty: the route fails with code
	score  float64
	code   string
}

var routeCases = []routeCase{
	{"a skill", ar.RoutingRequest{SkillID: "code.review"}, "code-reviewer", 1, ""},
	{"a skill with tags", ar.RoutingRequest{SkillID: "text.summarize", Tags: []string{"nlp"}}, "summarizer", 1.5, ""},
	{"a tag tie goes to the first registered", ar.RoutingRequest{Tags: []string{"text"}}, "summarizer", 0.5, ""},
	{"two tags", ar.RoutingRequest{Tags: []string{"text", "i18n"}}, "translator", 1, ""},
	{"a repeated tag counts once", ar.RoutingRequest{Tags: []string{"i18n", "i18n"}}, "translator", 0.5, ""},
	{"runtime breaks a tag tie", ar.RoutingRequest{Tags: []string{"text"}, PreferredRuntime: "copilot-bridge"}, "translator", 0.6, ""},
	{"runtime alone", ar.RoutingRequest{PreferredRuntime: "acp-container"}, "bug-fixer", 0.1, ""},
	{"skill of a second capability", ar.RoutingRequest{SkillID: "code.explain", Tags: []string{"code"}}, "doc-writer", 1.5, ""},
	{"no match", ar.RoutingRequest{SkillID: "space.travel"}, "", 0, ar.CodeNoRoute},
	{"no criterion", ar.RoutingRequest{}, "", 0, ar.CodeInvalidRequest},
}

// checkFleet asks reg the scenario's questions and checks the expected answers.
func checkFleet(t *testing.T, reg ar.Registry) {
	t.Helper()
	for _, c := range routeCases {
		res, err := reg.RouteByScore(c.req)
		if c.code != "" {
			var rerr *ar.Error
			if !errors.As(err, &rerr) || rerr.Code != c.code {
				t.Errorf("%s: want %s, got %+v %v", c.name, c.code, res, err)
			}
			continue
		}
		if err != nil || res.Agent.AgentType != c.winner || res.Score != c.score || res.Candidates[0].AgentType != c.winner {
			t.Errorf("%s: want %s (%v), got %+v %v", c.name, c.winner, c.score, res.Candidates, err)
		}
	}
	if s, err := reg.Route("bug.fix"); err != nil || s.AgentType != "bug-fixer" {
		t.Errorf("Route(bug.fix): %s %v", s.AgentType, err)
	}
	if _, err := reg.Route("space.travel"); !errors.Is(err, ar.ErrNoRoute) {
		t.Errorf("Route(space.travel): %v", err)
	}
	if got := names(reg.FindByTag("code")); !slices.Equal(got, []string{"bug-fixer", "code-reviewer", "doc-writer"}) {
		t.Errorf("FindByTag(code): %v", got)
	}
	if got := names(reg.FindBySkill("text.translate")); !slices.Equal(got, []string{"translator"}) {
		t.Errorf("FindBySkill(text.translate): %v", got)
	}
	if got := names(reg.FindBySkill("space.travel")); len(got) != 0 {
		t.Errorf("FindBySkill(space.travel): %v", got)
	}
	if got := names(reg.All()); !slices.Equal(got, []string{"bug-fixer", "code-reviewer", "doc-writer", "summarizer", "translator"}) {
		t.Errorf("All: %v", got)
	}
	s, ok := reg.FindByName("bug-fixer")
	if !ok || s.ACPPort != 3000 || s.OwnerTeam != "platform-eng" || s.Runtime != "acp-container" || s.Capabilities[0].Examples[0] != "Fix a nil-pointer dereference" {
		t.Errorf("FindByName(bug-fixer): %+v %v", s, ok)
	}
	if _, ok := reg.FindByName("nobody"); ok {
		t.Errorf("FindByName(nobody) found one")
	}
}

// sameAnswers holds two registries to the same answers, field by field.
func sameAnswers(t *testing.T, a, b ar.Registry) {
	t.Helper()
	for _, c := range routeCases {
		ra, ea := a.RouteByScore(c.req)
		rb, eb := b.RouteByScore(c.req)
		if !reflect.DeepEqual(answerOf(ra.Agent), answerOf(rb.Agent)) || !reflect.DeepEqual(ra.Candidates, rb.Candidates) || ra.Score != rb.Score || (ea == nil) != (eb == nil) {
			t.Errorf("%s: %+v %v vs %+v %v", c.name, ra, ea, rb, eb)
		}
	}
	all := func(r ar.Registry) []answer {
		var out []answer
		for _, s := range r.All() {
			out = append(out, answerOf(s))
		}
		return out
	}
	if !reflect.DeepEqual(all(a), all(b)) {
		t.Errorf("All differs:\n%+v\n%+v", all(a), all(b))
	}
}

// TestRegistryFileAndLive runs the same orchestrator scenarios against the file and against
// a live registry that loaded the same file, and holds them to the same answers.
func TestRegistryFileAndLive(t *testing.T) {
	path, err := filepath.Abs("testdata/fleet.json")
	if err != nil {
		t.Fatal(err)
	}
	file, err := ar.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, nil, "REGISTRY_FILE="+path)
	live, err := ar.NewLiveRegistry(e.ctx(), e.client, ar.LiveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()

	for name, reg := range map[string]ar.Registry{"file": file, "live": live} {
		t.Run(name, func(t *testing.T) { checkFleet(t, reg) })
	}
	t.Run("same answers", func(t *testing.T) { sameAnswers(t, file, live) })
}
