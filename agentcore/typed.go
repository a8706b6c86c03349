package agentcore

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
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
			if err := json.Unmarshal(input, &in); err != nil {
				return nil, fmt.Errorf("decode input: %w", err)
			}
			return execute(ctx, in, tc)
		},
	}
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
			props[name] = p
			if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") && f.Type.Kind() != reflect.Pointer {
				required = append(required, name)
			}
		}
		return map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false}
	}
	return map[string]any{}
}
