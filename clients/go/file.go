package agentregistry

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"unicode/utf16"
)

// FileRegistry answers Registry from a static registry file (docs/registry-file.md): a JSON
// object whose "agents" are A2A cards plus where each agent takes its tasks. Every entry is
// ready, weight 1, and entries registered in file order, as the registry loads the file.
type FileRegistry struct {
	path  string
	fleet *fleet
}

var _ Registry = (*FileRegistry)(nil)

// FileError lists every problem of a registry file, each naming its entry and rule, with the
// registry's own messages (docs/registry-file.md, "Rules").
type FileError struct {
	Path     string
	Problems []string
}

func (e *FileError) Error() string {
	return fmt.Sprintf("registry file %s is invalid:\n  %s", e.Path, strings.Join(e.Problems, "\n  "))
}

// LoadFile reads and checks a registry file. The file is used only when every entry is valid;
// otherwise the *FileError names every problem at once.
func LoadFile(path string) (*FileRegistry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseFile(path, data)
}

// ParseFile checks the text of a registry file; path only names it in errors.
func ParseFile(path string, data []byte) (*FileRegistry, error) {
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &FileError{Path: path, Problems: []string{"not JSON: " + err.Error()}}
	}
	specs, problems := CheckFile(raw)
	if len(problems) > 0 {
		return nil, &FileError{Path: path, Problems: problems}
	}
	entries := make([]*fleetEntry, len(specs))
	for i, s := range specs {
		entries[i] = newFleetEntry(s, true, int64(i))
	}
	return &FileRegistry{path: path, fleet: newFleet(entries)}, nil
}

// Path is the file the registry was read from.
func (r *FileRegistry) Path() string { return r.path }

// Route implements Registry.
func (r *FileRegistry) Route(skillID string) (AgentSpec, error) { return r.fleet.route(skillID) }

// RouteByScore implements Registry.
func (r *FileRegistry) RouteByScore(req RoutingRequest) (RouteResult, error) {
	return r.fleet.routeByScore(req)
}

// FindBySkill implements Registry.
func (r *FileRegistry) FindBySkill(skillID string) []AgentSpec { return r.fleet.findBySkill(skillID) }

// FindByTag implements Registry.
func (r *FileRegistry) FindByTag(tag string) []AgentSpec { return r.fleet.findByTag(tag) }

// FindByName implements Registry.
func (r *FileRegistry) FindByName(name string) (AgentSpec, bool) { return r.fleet.findByName(name) }

// All implements Registry.
func (r *FileRegistry) All() []AgentSpec { return r.fleet.all() }

var agentTypeRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9_-]{0,126}[a-z0-9])?$`)

const defaultOwnerTeam = "static"

// CheckFile applies the registry file's rules to a parsed file and maps its entries to
// AgentSpecs, in file order. Specs are returned only when there is no problem at all.
func CheckFile(raw any) ([]AgentSpec, []string) {
	root, ok := raw.(map[string]any)
	agents, isList := root["agents"].([]any)
	if !ok || !isList {
		return nil, []string{`registry file: must be an object with an "agents" array`}
	}
	var problems []string
	var specs []AgentSpec
	names := map[string]string{}
	subjects := map[string]string{}
	for i, item := range agents {
		entry, entryOK := item.(map[string]any)
		card, cardOK := entry["card"].(map[string]any)
		cardName, _ := card["name"].(string)
		where := fmt.Sprintf("agents[%d]", i)
		if cardName != "" {
			where = fmt.Sprintf("agents[%d] (%s)", i, cardName)
		}
		before := len(problems)
		fail := func(format string, args ...any) { problems = append(problems, where+": "+fmt.Sprintf(format, args...)) }
		if !entryOK {
			fail("entry must be an object")
			continue
		}
		if !cardOK {
			fail("missing required field card")
			continue
		}
		for _, field := range []string{"name", "description", "version"} {
			if !nonEmpty(card[field]) {
				fail("missing required field card.%s (a non-empty string)", field)
			}
		}
		for _, field := range []string{"queueSubject", "runtime"} {
			if !nonEmpty(entry[field]) {
				fail("missing required field %s (a non-empty string)", field)
			}
		}
		if cardName != "" {
			if !agentTypeRE.MatchString(cardName) {
				fail(`card.name "%s" is not a valid agent_type (lower-case letters, digits, "_" and "-", 1..128 characters)`, cardName)
			}
			if first, dup := names[cardName]; dup {
				fail(`duplicate agent name "%s" (first used by %s)`, cardName, first)
			} else {
				names[cardName] = fmt.Sprintf("agents[%d]", i)
			}
		}
		if subject, _ := entry["queueSubject"].(string); subject != "" {
			if first, dup := subjects[subject]; dup {
				fail(`duplicate queueSubject "%s" (first used by %s)`, subject, first)
			} else {
				subjects[subject] = where
			}
		}
		if port, given := entry["acpPort"]; given {
			if n, isNum := port.(float64); !isNum || n != float64(int64(n)) || n <= 0 {
				text, _ := json.Marshal(port)
				fail("acpPort must be > 0 (an integer port, got %s)", text)
			}
		}
		checkSkills(card["skills"], fail)
		if len(problems) > before {
			continue
		}
		// Structure is sound: the AgentSpec schema judges the mapped spec, in the file's terms.
		spec := entryToSpec(entry, card)
		data, err := json.Marshal(spec)
		if err != nil {
			fail("cannot encode the spec: %v", err)
			continue
		}
		issues, err := specIssues(data)
		if err != nil {
			fail("%v", err)
			continue
		}
		for _, is := range issues {
			fail("%s: %s (AgentSpec %s)", sourcePath(is.Path), is.Message, is.Path)
		}
		if len(issues) == 0 {
			specs = append(specs, spec)
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return specs, nil
}

func nonEmpty(v any) bool {
	s, ok := v.(string)
	return ok && s != ""
}

func checkSkills(v any, fail func(string, ...any)) {
	skills, ok := v.([]any)
	if !ok || len(skills) == 0 {
		fail("at least one skill is required in card.skills")
		return
	}
	ids := map[string]int{}
	for j, item := range skills {
		skill, ok := item.(map[string]any)
		if !ok {
			fail("card.skills[%d]: skill must be an object", j)
			continue
		}
		if !nonEmpty(skill["id"]) {
			fail("card.skills[%d]: skill id must be a non-empty string", j)
		}
		if !nonEmpty(skill["name"]) {
			fail("card.skills[%d]: skill name must be a non-empty string", j)
		}
		if d, given := skill["description"]; given {
			if _, isString := d.(string); !isString {
				fail("card.skills[%d]: skill description must be a string", j)
			}
		}
		id, _ := skill["id"].(string)
		if id == "" {
			continue
		}
		if first, dup := ids[id]; dup {
			fail(`card.skills[%d]: duplicate skill id "%s" (also card.skills[%d])`, j, id, first)
		} else {
			ids[id] = j
		}
	}
}

// entryToSpec maps one entry that passed the structural rules (docs/registry-file.md).
func entryToSpec(entry, card map[string]any) AgentSpec {
	name := card["name"].(string)
	owner := defaultOwnerTeam
	if provider, ok := card["provider"].(map[string]any); ok && nonEmpty(provider["organization"]) {
		owner = provider["organization"].(string)
	}
	cardJSON, _ := json.Marshal(card)
	spec := AgentSpec{
		AgentType:     name,
		Version:       card["version"].(string),
		Description:   card["description"].(string),
		OwnerTeam:     owner,
		NATSSubject:   entry["queueSubject"].(string),
		ConsumerGroup: name,
		Runtime:       entry["runtime"].(string),
		Weight:        1,
		Kind:          KindAgent,
		A2ACard:       cardJSON,
	}
	if port, ok := entry["acpPort"].(float64); ok {
		spec.ACPPort = int(port)
	}
	for _, item := range card["skills"].([]any) {
		spec.Capabilities = append(spec.Capabilities, skillToCapability(item.(map[string]any)))
	}
	return spec
}

// skillToCapability maps an A2A skill as the registry does: the tags and examples a
// capability can hold (tags 1..256 characters, examples up to 4096, the first 64 of each).
func skillToCapability(skill map[string]any) Capability {
	c := Capability{Name: skill["id"].(string), Description: skill["name"].(string)}
	if d, ok := skill["description"].(string); ok && d != "" {
		c.Description = d
	}
	c.InputSchema = rawSchema(skill["inputSchema"])
	c.OutputSchema = rawSchema(skill["outputSchema"])
	c.Tags = storable(skill["tags"], 1, 256)
	c.Examples = storable(skill["examples"], 0, 4096)
	return c
}

func rawSchema(v any) Schema {
	if v == nil {
		return Schema("{}")
	}
	b, _ := json.Marshal(v)
	return Schema(b)
}

func storable(v any, minLen, maxLen int) []string {
	list, _ := v.([]any)
	out := []string{}
	for _, item := range list {
		s, ok := item.(string)
		if !ok {
			continue
		}
		// Lengths count UTF-16 code units, as the registry (JavaScript) counts them.
		if n := len(utf16.Encode([]rune(s))); n >= minLen && n <= maxLen {
			out = append(out, s)
		}
	}
	if len(out) > 64 {
		out = out[:64]
	}
	return out
}

var fieldSource = map[string]string{
	"agent_type": "card.name", "version": "card.version", "description": "card.description",
	"capabilities": "card.skills", "owner_team": "card.provider.organization", "nats_subject": "queueSubject",
	"consumer_group": "card.name", "runtime": "runtime", "acp_port": "acpPort", "a2a_card": "card",
}

var skillFieldSource = map[string]string{
	"name": "id", "description": "description", "tags": "tags", "examples": "examples",
	"input_schema": "inputSchema", "output_schema": "outputSchema",
}

// sourcePath names an AgentSpec path in the file's terms: capabilities.2.name is card.skills[2].id.
func sourcePath(path string) string {
	parts := strings.Split(path, ".")
	if parts[0] == "capabilities" && len(parts) > 1 {
		out := "card.skills[" + parts[1] + "]"
		if len(parts) > 2 {
			f := parts[2]
			if m, ok := skillFieldSource[f]; ok {
				f = m
			}
			out += "." + strings.Join(append([]string{f}, parts[3:]...), ".")
		}
		return out
	}
	if parts[0] == "" {
		return "entry"
	}
	if m, ok := fieldSource[parts[0]]; ok {
		parts[0] = m
	}
	return strings.Join(parts, ".")
}
