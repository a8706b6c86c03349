package agentcore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// NewTool makes a tool from a typed function: the input schema is derived
// from I (see SchemaOf), the input is decoded into I after validation, and
// the output schema is derived from O.
//
//	type In struct {
//		City string `json:"city" desc:"City name"`
//		Unit string `json:"unit,omitempty" enum:"c,f"`
//	}
//	weather := agentcore.NewTool("weather", "Current weather for a city.",
//		func(ctx context.Context, in In, tc *agentcore.ToolContext) (Report, error) { … })
func NewTool[I, O any](id, description string, execute func(ctx context.Context, in I, tc *ToolContext) (O, error)) *Tool {
	return &Tool{
		ID:           id,
		Description:  description,
		InputSchema:  SchemaOf[I](),
		OutputSchema: SchemaOf[O](),
		Execute: func(ctx context.Context, input json.RawMessage, tc *ToolContext) (any, error) {
			var in I
			if decodeTyped(input, &in, tc) {
				return execute(ctx, in, tc)
			}
			in = *new(I)
			if err := json.Unmarshal(input, &in); err != nil {
				// JSON Schema takes 1.0 and 1e2 for integers; encoding/json
				// does not. Spelled as integers, they decode.
				if plain, ok := integralNumbers(input); !ok || json.Unmarshal(plain, &in) != nil {
					return nil, fmt.Errorf("decode input: %w", err)
				}
			}
			return execute(ctx, in, tc)
		},
	}
}

// decodeTyped decodes a big input into *in with its big strings decoded
// once each (bigjson.go), or taken from its validation's decode (tc); false
// when the input has none, or when anything is unusual, and the ordinary
// decode should be made instead.
func decodeTyped[I any](input json.RawMessage, in *I, tc *ToolContext) bool {
	var known []string
	if tc != nil {
		known = tc.decoded.of(input)
	}
	s, ok := spliceInput(input, known)
	if !ok || json.Unmarshal(s.small, in) != nil {
		return false
	}
	r := newInputRestorer(s)
	r.typed(reflect.ValueOf(in).Elem())
	return r.done()
}

// SchemaOf derives a JSON Schema from a Go type. Struct fields are named by
// their json tag; a field is required unless its tag says omitempty or it
// is a pointer. Tags: desc:"…" describes a field, enum:"a,b,c" limits a
// string.
func SchemaOf[T any]() json.RawMessage {
	s := schemaFor(reflect.TypeFor[T](), map[reflect.Type]bool{})
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("agentcore.SchemaOf: %v", err)) // only static types reach here
	}
	return b
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	timeType       = reflect.TypeFor[time.Time]()
)

func schemaFor(t reflect.Type, seen map[reflect.Type]bool) map[string]any {
	switch t {
	case rawMessageType:
		return map[string]any{}
	case timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return schemaFor(t.Elem(), seen)
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": schemaFor(t.Elem(), seen)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaFor(t.Elem(), seen)}
	case reflect.Struct:
		if seen[t] {
			return map[string]any{"type": "object"} // recursive type: stop here
		}
		seen[t] = true
		defer delete(seen, t)
		props := map[string]any{}
		required := []string{}
		for f := range t.Fields() {
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			p := schemaFor(f.Type, seen)
			if d := f.Tag.Get("desc"); d != "" {
				p["description"] = d
			}
			if e := f.Tag.Get("enum"); e != "" {
				p["enum"] = strings.Split(e, ",")
			}
			for _, k := range []string{"minimum", "maximum", "minLength"} {
				if v := f.Tag.Get(k); v != "" {
					if _, err := strconv.ParseFloat(v, 64); err != nil {
						panic(fmt.Sprintf("agentcore.SchemaOf: %s.%s: %s:%q is not a number", t, f.Name, k, v))
					}
					p[k] = json.Number(v)
				}
			}
			props[name] = p
			if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") && f.Type.Kind() != reflect.Pointer {
				required = append(required, name)
			}
		}
		return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	return map[string]any{}
}

// integralNumbers rewrites the numbers in doc that are whole but not
// spelled as integers (1.0, 1e2) as integers; ok is false when there are
// none, or doc is not JSON.
func integralNumbers(doc json.RawMessage) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case json.Number:
			if _, err := x.Int64(); err == nil {
				return x
			}
			if _, exp, found := strings.Cut(strings.ToLower(string(x)), "e"); found {
				if e, err := strconv.Atoi(exp); err != nil || e < -400 || e > 400 {
					return x // far out of any integer's range; and 1e999999999 would take long to expand
				}
			}
			if r, ok := new(big.Rat).SetString(string(x)); ok && r.IsInt() && r.Num().BitLen() <= 63 {
				changed = true
				return json.Number(r.Num().String())
			}
		}
		return v
	}
	v = walk(v)
	if !changed {
		return nil, false
	}
	b, err := json.Marshal(v)
	return b, err == nil
}
