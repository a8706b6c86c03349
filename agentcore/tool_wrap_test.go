package agentcore

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

// WithExecute keeps every exported field of Tool but Execute: each is set
// to a non-zero value by reflection, so a field added to Tool later and not
// copied fails here.
func TestWithExecuteKeepsEveryField(t *testing.T) {
	orig := &Tool{}
	v := reflect.ValueOf(orig).Elem()
	for i := 0; i < v.NumField(); i++ {
		f, sf := v.Field(i), v.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString(sf.Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			f.Set(reflect.ValueOf(json.RawMessage(`{"field":"` + sf.Name + `"}`)).Convert(f.Type()))
		case reflect.Func:
			f.Set(reflect.MakeFunc(f.Type(), func(args []reflect.Value) []reflect.Value {
				out := make([]reflect.Value, f.Type().NumOut())
				for j := range out {
					out[j] = reflect.Zero(f.Type().Out(j))
				}
				return out
			}))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		default:
			t.Fatalf("Tool.%s is a %s: teach this test to set it", sf.Name, f.Kind())
		}
	}
	ran := false
	wrapped := orig.WithExecute(func(context.Context, json.RawMessage, *ToolContext) (any, error) {
		ran = true
		return nil, nil
	})
	w := reflect.ValueOf(wrapped).Elem()
	for i := 0; i < v.NumField(); i++ {
		sf := v.Type().Field(i)
		if !sf.IsExported() || sf.Name == "Execute" {
			continue
		}
		a, b := v.Field(i), w.Field(i)
		same := false
		switch a.Kind() {
		case reflect.Func, reflect.Pointer:
			same = a.Pointer() == b.Pointer()
		default:
			same = reflect.DeepEqual(a.Interface(), b.Interface())
		}
		if !same {
			t.Errorf("WithExecute drops Tool.%s", sf.Name)
		}
	}
	if _, _ = wrapped.Execute(context.Background(), nil, nil); !ran {
		t.Error("WithExecute does not run the new Execute")
	}
}
