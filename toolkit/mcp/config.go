package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Transports a server can be reached over.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http" // streamable HTTP
)

// ServerConfig is one server as Claude Desktop and Cursor write it under
// "mcpServers": a command to run (stdio) or a URL (streamable HTTP).
// Fields other clients add (autoApprove, timeout, …) are ignored.
type ServerConfig struct {
	// Type is "stdio" or "http" ("streamable-http" and "streamableHttp"
	// are read as "http"); empty: stdio when Command is set, else http.
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Disabled servers are listed but not started.
	Disabled bool `json:"disabled,omitempty"`
}

// Transport is "stdio" or "http", or the unknown type as written.
func (c ServerConfig) Transport() string {
	switch strings.ToLower(c.Type) {
	case "":
		if c.Command != "" || c.URL == "" {
			return TransportStdio
		}
		return TransportHTTP
	case "stdio":
		return TransportStdio
	case "http", "streamable-http", "streamablehttp":
		return TransportHTTP
	}
	return c.Type
}

// Target is what the server runs or reaches, for people to read.
func (c ServerConfig) Target() string {
	if c.Transport() == TransportHTTP {
		return c.URL
	}
	return strings.Join(append([]string{c.Command}, c.Args...), " ")
}

// Validate says what is wrong with the server's configuration, if anything.
func (c ServerConfig) Validate() error {
	switch c.Transport() {
	case TransportStdio:
		if strings.TrimSpace(c.Command) == "" {
			return errors.New("a stdio server needs a command")
		}
		if c.URL != "" {
			return errors.New("give either a command (stdio) or a url (streamable HTTP), not both")
		}
		for k := range c.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return fmt.Errorf("environment variable name %q is not valid", k)
			}
		}
	case TransportHTTP:
		if c.Command != "" {
			return errors.New("give either a command (stdio) or a url (streamable HTTP), not both")
		}
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("url %q is not an http(s) address", c.URL)
		}
		for k, v := range c.Headers {
			if !headerName.MatchString(k) || strings.ContainsAny(v, "\r\n\x00") {
				return fmt.Errorf("header %q is not a valid HTTP header", k)
			}
		}
	case "sse":
		return errors.New(`type "sse" (the old HTTP+SSE transport) is not supported: use the server's streamable HTTP endpoint (type "http")`)
	default:
		return fmt.Errorf("unknown type %q (want stdio or http)", c.Type)
	}
	return nil
}

var headerName = regexp.MustCompile(`^[!#$%&'*+.^_|~0-9A-Za-z-]+$`)

// maxNameLen keeps "<server>_<tool>" readable; tool names are cut to 64
// characters anyway.
const maxNameLen = 40

var serverName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// ValidName says why name cannot name a server, if it cannot.
func ValidName(name string) error {
	if name == "" {
		return errors.New("a server needs a name")
	}
	if len(name) > maxNameLen || !serverName.MatchString(name) {
		return fmt.Errorf("server name %q: use up to %d letters, digits, '-', '_' or '.', starting with a letter or digit", name, maxNameLen)
	}
	return nil
}

// File is the mcp.json document: {"mcpServers": {"name": {…}}}.
type File struct {
	Servers map[string]ServerConfig `json:"mcpServers"`
}

// ParseFile reads an mcp.json document. Only a document that is not that
// shape is an error; each server's own problems are left to Validate, so
// that one bad entry does not take the others down with it.
func ParseFile(b []byte) (map[string]ServerConfig, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return map[string]ServerConfig{}, nil
	}
	var raw struct {
		Servers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("not JSON of the form {\"mcpServers\": {\"name\": {\"command\": …} | {\"url\": …}}}: %w", err)
	}
	if raw.Servers == nil {
		return nil, errors.New(`no "mcpServers" object`)
	}
	out := make(map[string]ServerConfig, len(raw.Servers))
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(raw.Servers)) {
		var c ServerConfig
		if err := json.Unmarshal(raw.Servers[name], &c); err != nil {
			errs = append(errs, fmt.Errorf("server %q: %w", name, err))
			continue
		}
		out[name] = c
	}
	if len(errs) > 0 {
		return out, errors.Join(errs...)
	}
	return out, nil
}
