package app

import "parley/app/chat"

// withMemory is the settings Settings reads and changes, the working
// memory's among them (the UI asks for them as ui.MemorySettings).
type withMemory struct {
	*settings
	*chat.Memory
}
