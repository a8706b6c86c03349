package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The stdio servers of these tests are this test binary, run again with
// testServerEnv set to the server's behaviour.
const testServerEnv = "PARLEY_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	switch os.Getenv(testServerEnv) {
	case "":
		os.Exit(m.Run())
	case "tools":
		if err := newTestServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "hostile":
		if err := newHostileServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "exit-at-start":
		fmt.Fprintln(os.Stderr, "fatal: GITHUB_TOKEN is not set")
		os.Exit(1)
	case "stubborn":
		// Serves, then ignores both the end of its input and SIGTERM;
		// only SIGKILL ends it. It writes its pid where it is told.
		signal.Ignore(syscall.SIGTERM)
		_ = os.WriteFile(os.Getenv(testServerEnv+"_PID"), []byte(strconv.Itoa(os.Getpid())), 0o644)
		_ = newTestServer().Run(context.Background(), &mcp.StdioTransport{})
		time.Sleep(time.Hour)
	case "silent":
		// Reads its requests and never answers one.
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	fmt.Fprintln(os.Stderr, "unknown test server", os.Getenv(testServerEnv))
	os.Exit(2)
}

// newTestServer is a small MCP server, written with the same SDK:
//
//	echo {text}  answers "echo: <text>"
//	fail         answers an isError result
//	hang         never answers (until the call is cancelled)
//	crash        writes to stderr and exits
//	grow         adds the tool "extra", which tells the client its tool list changed
//	garbage      writes a line that is not JSON-RPC to stdout, then answers
//	picture      answers text and an image
func newTestServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "parley-test", Version: "1.0.0"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	empty := json.RawMessage(`{"type":"object","properties":{}}`)
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Repeat the text.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to repeat"}},"required":["text"]}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return text("echo: " + in.Text), nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: empty}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text("the disk is full")
		r.IsError = true
		return r, nil
	})
	s.AddTool(&mcp.Tool{Name: "hang", InputSchema: empty}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	s.AddTool(&mcp.Tool{Name: "crash", InputSchema: empty}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stderr, "panic: crashing on purpose")
		os.Exit(3)
		return nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "grow", InputSchema: empty}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.AddTool(&mcp.Tool{Name: "extra", Description: "Added at run time.", InputSchema: empty},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("extra!"), nil })
		return text("grown"), nil
	})
	s.AddTool(&mcp.Tool{Name: "garbage", InputSchema: empty}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stdout, "this is not JSON-RPC {")
		return text("after the garbage"), nil
	})
	s.AddTool(&mcp.Tool{Name: "picture", InputSchema: empty}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "a red dot:"},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte("not really a png")},
		}}, nil
	})
	return s
}
