package agentcore

import "context"

// PutFile stores a checked file a user attaches and returns its SHA-256,
// which a file part names (FileURL).
func (rt *Runtime) PutFile(ctx context.Context, mime string, data []byte) (string, error) {
	return rt.store.PutFile(ctx, mime, data)
}

// GetFile returns a stored file; ErrNotFound when there is none.
func (rt *Runtime) GetFile(ctx context.Context, ref string) (StoredFile, error) {
	return rt.store.GetFile(ctx, ref)
}

// FileInfo returns a stored file's media type and size.
func (rt *Runtime) FileInfo(ctx context.Context, ref string) (string, int64, error) {
	return rt.store.FileInfo(ctx, ref)
}
