package ui

// InboxComputations is how many times the server's inbox has been
// computed (tests count them per change).
func (s *Server) InboxComputations() int64 { return s.inboxes.Computations() }
