package render

import (
	"errors"
	"os"
)

func killProcess(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
