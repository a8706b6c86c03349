package toolkit

import (
	"fmt"
	"path"
	"strings"
)

// maxGlobAlternatives bounds brace expansion ({a,b}{c,d}… multiplies).
const maxGlobAlternatives = 256

// compileGlob checks a slash-separated glob and expands its braces. The
// syntax is path.Match's per segment (*, ?, [class]) plus "**" as a whole
// segment for any number of directories and {a,b} for alternatives.
func compileGlob(pattern string) ([]string, error) {
	alts, err := expandBraces(pattern)
	if err != nil {
		return nil, err
	}
	for _, a := range alts {
		for _, seg := range strings.Split(a, "/") {
			if _, err := path.Match(seg, ""); err != nil {
				return nil, fmt.Errorf("segment %q: %w", seg, err)
			}
		}
	}
	return alts, nil
}

// matchAny reports whether name matches one of the compiled alternatives.
func matchAny(alts []string, name string) bool {
	segs := strings.Split(name, "/")
	for _, a := range alts {
		if matchSegments(strings.Split(a, "/"), segs) {
			return true
		}
	}
	return false
}

func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 1 && pat[1] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 1 {
				return true
			}
			for i := range len(segs) + 1 {
				if matchSegments(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// expandBraces turns "a.{go,md}" into "a.go", "a.md", nesting allowed. A
// brace without a comma or without its closing brace stays literal.
func expandBraces(p string) ([]string, error) {
	start := strings.IndexByte(p, '{')
	if start < 0 {
		return []string{p}, nil
	}
	depth, end := 0, -1
	var commas []int
scan:
	for i := start; i < len(p); i++ {
		switch p[i] {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				end = i
				break scan
			}
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		}
	}
	if end < 0 || len(commas) == 0 {
		rests, err := expandBraces(p[start+1:])
		if err != nil {
			return nil, err
		}
		out := make([]string, len(rests))
		for i, r := range rests {
			out[i] = p[:start+1] + r
		}
		return out, nil
	}
	var out []string
	from := start + 1
	for _, to := range append(commas, end) {
		more, err := expandBraces(p[:start] + p[from:to] + p[end+1:])
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
		if len(out) > maxGlobAlternatives {
			return nil, fmt.Errorf("braces expand to more than %d alternatives", maxGlobAlternatives)
		}
		from = to + 1
	}
	return out, nil
}
