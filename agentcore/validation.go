package agentcore

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Tool input is checked as Mastra's validateToolInput does, so that a
// model reads the same thing from Parley as from Mastra: keys an input
// schema does not declare on a closed object are dropped (zod strips them)
// and the call goes on; input that fails the schema or Refine comes back
// as Mastra's result, {error: true, message, validationErrors}: Mastra's
// sentence, dotted paths, zod's wording where the failure has a zod
// equivalent, and the arguments as 2-space JSON. The tools route answers
// a direct call with the same result.

// maxShownArguments bounds the input echoed in a validation error, as
// Mastra's truncateForLogging does.
const maxShownArguments = 200

// InputError is Mastra's result for input that fails a tool's schema.
type InputError struct {
	Error            bool        `json:"error"`
	Message          string      `json:"message"`
	ValidationErrors FieldErrors `json:"validationErrors"`
}

// FieldErrors is Mastra's buildFormattedErrors: the messages at a path, and
// those below it by key.
type FieldErrors struct {
	Errors []string                `json:"errors"`
	Fields map[string]*FieldErrors `json:"fields"`
}

func (f *FieldErrors) add(path []string, msg string) {
	for _, key := range path {
		next := f.Fields[key]
		if next == nil {
			next = &FieldErrors{Errors: []string{}, Fields: map[string]*FieldErrors{}}
			f.Fields[key] = next
		}
		f = next
	}
	f.Errors = append(f.Errors, msg)
}

// CheckInput validates a call's input as Mastra does. It returns the input
// to run the tool with (unknown keys dropped), or the failure as Mastra's
// result; err only when the tool's schema itself is broken. name is what
// the model called the tool.
func (t *Tool) CheckInput(name string, input json.RawMessage) (json.RawMessage, *InputError, error) {
	return t.checkInput(name, input, nil)
}

// checkInput is CheckInput keeping the big strings of the input it decoded
// in keep, when keep is not nil.
func (t *Tool) checkInput(name string, input json.RawMessage, keep *decodedInput) (json.RawMessage, *InputError, error) {
	clean, err := t.stripValidate(input, keep)
	var se *SchemaError
	switch {
	case err == nil:
		return clean, nil, nil
	case !errors.As(err, &se):
		return nil, nil, fmt.Errorf("tool %s cannot validate its input: %w", name, err)
	}
	out := &InputError{Error: true, ValidationErrors: FieldErrors{Errors: []string{}, Fields: map[string]*FieldErrors{}}}
	var lines []string
	for _, p := range se.Problems {
		for _, is := range zodIssues(t.InputSchema, p) {
			out.ValidationErrors.add(is.path, is.msg)
			lines = append(lines, "- "+cmp.Or(strings.Join(is.path, "."), "root")+": "+is.msg)
		}
	}
	out.Message = fmt.Sprintf("Tool input validation failed for %s. Please fix the following errors and try again:\n%s\n\nProvided arguments: %s",
		name, strings.Join(lines, "\n"), shownArguments(input))
	return nil, out, nil
}

// stripValidate drops, at every level the schema describes, the keys of
// objects whose schema lists its properties and allows no others (input
// that is not JSON, or has nothing to drop, is left as it was), then
// validates what is left (ValidateInput). The input is decoded once for
// both (a big argument was decoded twice, and each decode buffers all of
// it): the stripped value is what decoding the stripped JSON gives, so it
// is validated as it is. A schema that closes no object (closesObjects)
// drops nothing, and the input is not decoded for it.
//
// keep, when not nil, is given the big strings decoded from input, when
// clean is input.
func (t *Tool) stripValidate(input json.RawMessage, keep *decodedInput) (json.RawMessage, error) {
	if err := t.compile(); err != nil {
		return input, err
	}
	var schema map[string]any
	if t.closed && json.Unmarshal(t.InputSchema, &schema) != nil {
		schema = nil
	}
	if schema == nil && t.in == nil {
		return input, t.refine(input)
	}
	v, derr := decodeInputKept(input, keep)
	clean := input
	if schema != nil && derr == nil && stripValue(schema, v) {
		if out, err := json.Marshal(v); err == nil {
			clean = out
			if keep != nil {
				*keep = decodedInput{} // decoded from input, not clean
			}
		} else {
			v, derr = decodeInput(input) // strip leaves the input as it was
		}
	}
	if t.in != nil {
		if err := validateValue(t.in, v, derr); err != nil {
			return clean, err
		}
	}
	return clean, t.refine(clean)
}

// closesObjects reports whether schema has, anywhere, an object schema
// that lists its properties and allows no others: the only kind strip
// drops keys for.
func closesObjects(schema any) bool {
	switch x := schema.(type) {
	case map[string]any:
		if x["additionalProperties"] == false && x["properties"] != nil {
			return true
		}
		for _, v := range x {
			if closesObjects(v) {
				return true
			}
		}
	case []any:
		for _, v := range x {
			if closesObjects(v) {
				return true
			}
		}
	}
	return false
}

// stripValue drops v's undeclared keys in place; it says whether any went.
func stripValue(schema map[string]any, v any) bool {
	dropped := false
	switch x := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		closed := schema["additionalProperties"] == false
		for k, val := range x {
			sub, declared := props[k].(map[string]any)
			switch {
			case !declared && closed && props != nil:
				delete(x, k)
				dropped = true
			case declared:
				dropped = stripValue(sub, val) || dropped
			}
		}
	case []any:
		if items, ok := schema["items"].(map[string]any); ok {
			for _, el := range x {
				dropped = stripValue(items, el) || dropped
			}
		}
	}
	return dropped
}

// shownArguments is Mastra's truncateForLogging: the input as 2-space JSON
// in its own key order, cut at 200 characters.
func shownArguments(data json.RawMessage) string {
	var b bytes.Buffer
	shown := string(data)
	if json.Indent(&b, data, "", "  ") == nil {
		shown = b.String()
	}
	if r := []rune(shown); len(r) > maxShownArguments {
		shown = string(r[:maxShownArguments]) + "... (truncated)"
	}
	return shown
}

type zodIssue struct {
	path []string
	msg  string
}

var (
	missingProps = regexp.MustCompile(`^missing properties: (.+)$`)
	extraProps   = regexp.MustCompile(`^additionalProperties (.+) not allowed$`)
	quoted       = regexp.MustCompile(`'([^']*)'`)
	wrongType    = regexp.MustCompile(`^expected (\w+), but got (\w+)$`)
	oneOf        = regexp.MustCompile(`^value must be one of (.+)$`)
)

// zodIssues turns one of the validator's problems ("/a/0: message") into
// the issues zod reports for it: a dotted path and zod's wording for a
// missing property, a wrong type, a value outside an enum and an unknown
// key; other messages are kept as the validator wrote them.
func zodIssues(schema json.RawMessage, problem string) []zodIssue {
	loc, msg, _ := strings.Cut(problem, ": ")
	var path []string
	if loc != "(root)" && loc != "" {
		for _, k := range strings.Split(strings.TrimPrefix(loc, "/"), "/") {
			path = append(path, strings.NewReplacer("~1", "/", "~0", "~").Replace(k))
		}
	}
	if m := missingProps.FindStringSubmatch(msg); m != nil {
		var out []zodIssue
		for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
			p := append(slices.Clip(path), q[1])
			want := "Invalid input"
			if t := schemaType(schema, p); t != "" {
				want = "Invalid input: expected " + t + ", received undefined"
			}
			out = append(out, zodIssue{p, want})
		}
		return out
	}
	if m := extraProps.FindStringSubmatch(msg); m != nil {
		keys := quoted.FindAllStringSubmatch(m[1], -1)
		names := make([]string, len(keys))
		for i, k := range keys {
			names[i] = strconv.Quote(k[1])
		}
		word := "key"
		if len(names) > 1 {
			word = "keys"
		}
		return []zodIssue{{path, fmt.Sprintf("Unrecognized %s: %s", word, strings.Join(names, ", "))}}
	}
	if m := wrongType.FindStringSubmatch(msg); m != nil {
		return []zodIssue{{path, "Invalid input: expected " + zodType(m[1]) + ", received " + zodType(m[2])}}
	}
	if m := oneOf.FindStringSubmatch(msg); m != nil {
		return []zodIssue{{path, "Invalid option: expected one of " + strings.ReplaceAll(m[1], ", ", "|")}}
	}
	return []zodIssue{{path, msg}}
}

// zodType names a JSON Schema type as zod does (an integer is a number).
func zodType(t string) string {
	if t == "integer" {
		return "number"
	}
	return t
}

// schemaType is the type the schema gives the value at path, following
// properties and items; "" when the schema does not say.
func schemaType(schema json.RawMessage, path []string) string {
	var node map[string]any
	if json.Unmarshal(schema, &node) != nil {
		return ""
	}
	for _, key := range path {
		var next any
		if props, ok := node["properties"].(map[string]any); ok {
			next = props[key]
		}
		if next == nil {
			next = node["items"]
		}
		if node, _ = next.(map[string]any); node == nil {
			return ""
		}
	}
	t, _ := node["type"].(string)
	return zodType(t)
}
