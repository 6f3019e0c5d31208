package agentregistry_test

import (
	"errors"
	"slices"
	"testing"

	ar "github.com/agent-registry/agent-registry/clients/go"
)

// TestFileRules holds the file implementation to the registry file's rules, with the
// registry's own messages (docs/registry-file.md, "Rules"), every problem reported at once.
func TestFileRules(t *testing.T) {
	cases := []struct {
		name, file string
		problems   []string
	}{
		{"not an agents object", `[1]`, []string{`registry file: must be an object with an "agents" array`}},
		{"agents not an array", `{"agents": {}}`, []string{`registry file: must be an object with an "agents" array`}},
		{"entry not an object", `{"agents": [3]}`, []string{`agents[0]: entry must be an object`}},
		{"no card", `{"agents": [{"queueSubject": "a.b", "runtime": "x"}]}`, []string{`agents[0]: missing required field card`}},
		{"required strings", `{"agents": [{"card": {"name": "a", "version": "", "skills": [{"id": "s", "name": "S"}]}, "runtime": 3}]}`, []string{
			`agents[0] (a): missing required field card.description (a non-empty string)`,
			`agents[0] (a): missing required field card.version (a non-empty string)`,
			`agents[0] (a): missing required field queueSubject (a non-empty string)`,
			`agents[0] (a): missing required field runtime (a non-empty string)`,
		}},
		{"bad agent_type", entry("Big", "q.big", `[{"id": "s", "name": "S"}]`, ""), []string{
			`agents[0] (Big): card.name "Big" is not a valid agent_type (lower-case letters, digits, "_" and "-", 1..128 characters)`,
		}},
		{"duplicate names and subjects", `{"agents": [` + inner("a", "q.one", `[{"id": "s", "name": "S"}]`, "") + `,` + inner("a", "q.one", `[{"id": "s", "name": "S"}]`, "") + `]}`, []string{
			`agents[1] (a): duplicate agent name "a" (first used by agents[0])`,
			`agents[1] (a): duplicate queueSubject "q.one" (first used by agents[0] (a))`,
		}},
		{"acpPort", entry("a", "q.a", `[{"id": "s", "name": "S"}]`, `, "acpPort": 0`), []string{`agents[0] (a): acpPort must be > 0 (an integer port, got 0)`}},
		{"acpPort not an integer", entry("a", "q.a", `[{"id": "s", "name": "S"}]`, `, "acpPort": 1.5`), []string{`agents[0] (a): acpPort must be > 0 (an integer port, got 1.5)`}},
		{"no skill", entry("a", "q.a", `[]`, ""), []string{`agents[0] (a): at least one skill is required in card.skills`}},
		{"skill fields", entry("a", "q.a", `[{"id": "", "name": "S"}, {"id": "t"}, 4, {"id": "u", "name": "U", "description": 1}]`, ""), []string{
			`agents[0] (a): card.skills[0]: skill id must be a non-empty string`,
			`agents[0] (a): card.skills[1]: skill name must be a non-empty string`,
			`agents[0] (a): card.skills[2]: skill must be an object`,
			`agents[0] (a): card.skills[3]: skill description must be a string`,
		}},
		{"the mapped spec breaks the AgentSpec schema", entry("a", "q.a", `[{"id": "bug fix", "name": "S"}]`, `, "acpPort": 70000`), []string{
			`agents[0] (a): acpPort: maximum: got 70,000, want 65,535 (AgentSpec acp_port)`,
			`agents[0] (a): card.skills[0].id: 'bug fix' does not match pattern '^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$' (AgentSpec capabilities.0.name)`,
		}},
		{"duplicate skill ids", entry("a", "q.a", `[{"id": "s", "name": "S"}, {"id": "s", "name": "T"}]`, ""), []string{
			`agents[0] (a): card.skills[1]: duplicate skill id "s" (also card.skills[0])`,
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ar.ParseFile("fleet.json", []byte(c.file))
			var ferr *ar.FileError
			if !errors.As(err, &ferr) {
				t.Fatalf("want a *FileError, got %v", err)
			}
			if !slices.Equal(ferr.Problems, c.problems) {
				t.Fatalf("problems:\n%q\nwant\n%q", ferr.Problems, c.problems)
			}
		})
	}
}

func inner(name, subject, skills, extra string) string {
	return `{"card": {"name": "` + name + `", "description": "d", "version": "1.0.0", "skills": ` + skills + `}, "queueSubject": "` + subject + `", "runtime": "r"` + extra + `}`
}

func entry(name, subject, skills, extra string) string {
	return `{"agents": [` + inner(name, subject, skills, extra) + `]}`
}

// TestFileMapping checks how an entry becomes an AgentSpec: owner default, skill
// description fallback, and the tags and examples a capability can hold.
func TestFileMapping(t *testing.T) {
	long := make([]byte, 257)
	for i := range long {
		long[i] = 'x'
	}
	reg, err := ar.ParseFile("f", []byte(entry("a", "q.a", `[{"id": "s.one", "name": "Skill one", "tags": ["", "ok", "`+string(long)+`", 7]}]`, "")))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := reg.FindByName("a")
	if !ok || s.OwnerTeam != "static" || s.ConsumerGroup != "a" || s.Weight != 1 || s.Capabilities[0].Description != "Skill one" || !slices.Equal(s.Capabilities[0].Tags, []string{"ok"}) || string(s.Capabilities[0].InputSchema) != "{}" {
		t.Fatalf("%+v", s)
	}
	if _, err := ar.LoadFile("testdata/no-such-file.json"); err == nil {
		t.Fatal("a missing file loaded")
	}
	_, err = ar.ParseFile("f", []byte("{"))
	var ferr *ar.FileError
	if !errors.As(err, &ferr) || len(ferr.Problems) != 1 {
		t.Fatalf("not JSON: %v", err)
	}
}
