//go:build !race

package storage

// raceEnabled: the tests run under the race detector (race_on_test.go).
const raceEnabled = false
