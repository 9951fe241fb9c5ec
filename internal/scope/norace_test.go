//go:build !race

package scope

const raceEnabled = false
