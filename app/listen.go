package app

import (
	"context"
	"net"
)

// ServeOn answers on an already-open loopback listener until ctx ends: the
// way tests and benchmarks run a real Parley on a free port.
func (in *Instance) ServeOn(ctx context.Context, ln net.Listener) error {
	return in.serve(ctx, ln, true, nil)
}
