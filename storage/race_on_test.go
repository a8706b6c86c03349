//go:build race

package storage

// raceEnabled: the tests run under the race detector, whose shadow memory
// for every address touched is resident and never handed back.
const raceEnabled = true
