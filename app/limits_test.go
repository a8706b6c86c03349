package app

import (
	"io"
	"strings"
	"testing"
	"time"
)

// The time limits' flags: a flag wins over its variable, a bad value is
// refused at start by the flag's name, a bad variable by its name.
func TestTimeLimitFlags(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("PARLEY_FIRST_TOKEN_TIMEOUT", "soon")
	t.Setenv("PARLEY_IDLE_TIMEOUT", "")
	c, err := parseFlags("serve", []string{"--data", dir, "--workspace", dir, "--first-token-timeout", "15m", "--idle-timeout", "3m"}, io.Discard, true)
	if err != nil {
		t.Fatal(err)
	}
	if c.FirstTokenTimeout != 15*time.Minute || c.IdleTimeout != 3*time.Minute {
		t.Fatalf("first %v, idle %v", c.FirstTokenTimeout, c.IdleTimeout)
	}
	o := withLimits(c, Options{})
	if o.LLM.FirstTokenTimeout != 15*time.Minute || o.LLM.IdleTimeout != 3*time.Minute {
		t.Fatalf("options: %+v", o.LLM)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--idle-timeout", "90"}, `invalid value "90" for flag -idle-timeout: want a positive duration such as 90s or 10m`},
		{[]string{"--first-token-timeout", "-5m"}, `invalid value "-5m" for flag -first-token-timeout`},
		{nil, `PARLEY_FIRST_TOKEN_TIMEOUT="soon": want a positive duration such as 90s or 10m`},
	} {
		_, err := parseFlags("serve", append([]string{"--data", dir, "--workspace", dir}, tc.args...), io.Discard, true)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.args, err, tc.want)
		}
	}

	// The desktop takes them too; commands that run no model do not.
	if c, err := parseFlags("desktop", []string{"--data", dir, "--workspace", dir, "--first-token-timeout", "20m"}, io.Discard, false); err != nil || c.FirstTokenTimeout != 20*time.Minute {
		t.Errorf("desktop: %v, %v", c.FirstTokenTimeout, err)
	}
	if _, err := parseFlags("token", []string{"--data", dir, "--first-token-timeout", "20m"}, io.Discard, false); err == nil {
		t.Error("parley token took --first-token-timeout")
	}
}
