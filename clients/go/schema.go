package agentregistry

import (
	"bytes"
	_ "embed" // the AgentSpec schema
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// agentSpecSchemaText is a copy of the repository's protocol/agentspec.schema.json (a test
// holds it equal to that file); run go generate after the schema changes.
//
//go:generate cp ../../protocol/agentspec.schema.json agentspec.schema.json
//go:embed agentspec.schema.json
var agentSpecSchemaText []byte

const agentSpecSchemaURL = "https://agent-registry.invalid/protocol/agentspec.schema.json"

var agentSpecSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(agentSpecSchemaText))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseRegexpEngine(ecmaRegexp)
	if err := c.AddResource(agentSpecSchemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(agentSpecSchemaURL)
})

// ecmaUnicodeEscape is the \uXXXX escape of ECMAScript patterns, which RE2 spells \x{XXXX}.
var ecmaUnicodeEscape = regexp.MustCompile(`\\u([0-9A-Fa-f]{4})`)

// ecmaRegexp compiles the schema's ECMAScript patterns with Go's RE2 (protocol/README.md).
func ecmaRegexp(s string) (jsonschema.Regexp, error) {
	return regexp.Compile(ecmaUnicodeEscape.ReplaceAllString(s, `\x{$1}`))
}

// ValidateSpec checks spec against the protocol's AgentSpec schema
// (protocol/agentspec.schema.json). A refusal is a *Error with code invalid_spec and one
// issue per problem, at the paths the registry uses (capabilities.0.name). The schema is
// necessary, not sufficient: the registry also checks what JSON Schema cannot say (semver
// versions, unique capability names, schemas that compile, ...), so a spec that passes here
// may still be refused by the registry.
func ValidateSpec(spec AgentSpec) error {
	data, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	return ValidateSpecJSON(data)
}

// ValidateSpecJSON checks a spec given as JSON text, as ValidateSpec does.
func ValidateSpecJSON(data []byte) error {
	issues, err := specIssues(data)
	if err != nil {
		return err
	}
	if len(issues) == 0 {
		return nil
	}
	return &Error{Code: CodeInvalidSpec, Message: fmt.Sprintf("the spec breaks the AgentSpec schema at %s", issues[0].Path), Issues: issues}
}

func specIssues(data []byte) ([]Issue, error) {
	sch, err := agentSpecSchema()
	if err != nil {
		return nil, fmt.Errorf("agentregistry: the AgentSpec schema does not compile: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return []Issue{{Path: "", Message: "not JSON: " + err.Error()}}, nil
	}
	err = sch.Validate(inst)
	if err == nil {
		return nil, nil
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return nil, err
	}
	p := message.NewPrinter(language.English)
	seen := map[string]bool{}
	var issues []Issue
	add := func(path []string, msg string) {
		key := strings.Join(path, ".")
		if !seen[key] {
			seen[key] = true
			issues = append(issues, Issue{Path: key, Message: msg})
		}
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if pn, ok := e.ErrorKind.(*kind.PropertyNames); ok {
			// The causes judge the key alone; the registry names the key's place in the object.
			msg := "invalid key"
			if len(e.Causes) > 0 {
				msg = "key: " + e.Causes[0].ErrorKind.LocalizedString(p)
			}
			// The library's InstanceLocation of this error can be overwritten by later
			// siblings (it shares its slice), so the key is found in the instance instead.
			add(append(pathToKey(inst, pn.Property), pn.Property), msg)
			return
		}
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		if req, ok := e.ErrorKind.(*kind.Required); ok {
			// The registry names the missing field itself, not the object that lacks it.
			for _, m := range req.Missing {
				add(append(slices.Clone(e.InstanceLocation), m), "is required")
			}
			return
		}
		add(e.InstanceLocation, e.ErrorKind.LocalizedString(p))
	}
	walk(verr)
	// The library walks objects in map order: sort, so the same spec gets the same answer.
	slices.SortFunc(issues, func(a, b Issue) int { return strings.Compare(a.Path, b.Path) })
	return mostSpecific(issues), nil
}

// pathToKey returns the path of the first object in v that holds key.
func pathToKey(v any, key string) []string {
	switch t := v.(type) {
	case map[string]any:
		if _, ok := t[key]; ok {
			return []string{}
		}
		names := make([]string, 0, len(t))
		for k := range t {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			if p := pathToKey(t[k], key); p != nil {
				return append([]string{k}, p...)
			}
		}
	case []any:
		for i, item := range t {
			if p := pathToKey(item, key); p != nil {
				return append([]string{fmt.Sprint(i)}, p...)
			}
		}
	}
	return nil
}

// mostSpecific drops an issue whose path lies above another's: where a field may be an
// object or null, the branch that fails inside the object says more than "not null".
func mostSpecific(issues []Issue) []Issue {
	var out []Issue
	for _, is := range issues {
		above := false
		for _, other := range issues {
			if other.Path != is.Path && (is.Path == "" || strings.HasPrefix(other.Path, is.Path+".")) {
				above = true
				break
			}
		}
		if !above {
			out = append(out, is)
		}
	}
	return out
}
