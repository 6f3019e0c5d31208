package agentregistry

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
)

// subjectToken names the last token of an operator's subject and the pattern it must match.
type subjectToken struct {
	name    string // as the error names it: "agent_type", "tenant"
	value   string
	pattern *regexp.Regexp
}

func agentTypeToken(agentType string) subjectToken {
	return subjectToken{name: "agent_type", value: agentType, pattern: agentTypeRE}
}

func tenantToken(tenant string) subjectToken {
	return subjectToken{name: "tenant", value: tenant, pattern: tenantRE}
}

// operatorCall sends an operator's request (approval decisions, deprecation, trust roots) on
// <prefix>.<group>.<op>.<token> and decodes its reply as R. The token is checked here: one
// that is not a single subject token would send the request to another subject.
func operatorCall[R any](ctx context.Context, c *Client, group, op string, token subjectToken, req any) (*R, error) {
	if !token.pattern.MatchString(token.value) {
		return nil, &Error{Code: CodeInvalidRequest, Message: fmt.Sprintf("%s %q is not a valid subject token (%s)", token.name, token.value, token.pattern)}
	}
	data, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var r R
	if err := c.request(ctx, c.prefix+"."+group+"."+op+"."+token.value, data, &r); err != nil {
		return nil, err
	}
	return &r, nil
}
