package weft_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A program in a module of its own imports the public package as a user's
// would: its go.mod requires this module, and what go mod tidy would add,
// and replaces it by this
// directory, and it is built and run offline, from the module cache the
// build of this module filled (GOPROXY=off). The same program importing
// an internal package instead must fail to build: that is what the
// public package is for.
func TestImportFromAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program: not in -short")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	root, err := os.Getwd() // the package's directory, the module's root
	if err != nil {
		t.Fatal(err)
	}
	mod, requires := moduleOf(t, filepath.Join(root, "go.mod"))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	build := func(t *testing.T, imports, body string) (string, error) {
		dir := t.TempDir()
		gomod := "module example.com/user\n\ngo " + strings.TrimPrefix(runtime.Version(), "go") + "\n\nrequire " + mod + " v0.0.0\n\n" + requires + "\nreplace " + mod + " => " + root + "\n"
		main := "package main\n\nimport (\n\t\"fmt\"\n\n\t" + imports + "\n)\n\nfunc main() {\n" + body + "\n}\n"
		for name, text := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "main.go": []byte(main)} {
			if err := os.WriteFile(filepath.Join(dir, name), text, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		bin := filepath.Join(dir, "user")
		cmd := exec.Command(goBin, "build", "-o", bin, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return string(out), err
		}
		out, err = exec.Command(bin).CombinedOutput()
		return string(out), err
	}

	out, err := build(t, `"`+mod+`"`, `	_, err := weft.New(weft.Config{})
	fmt.Println(weft.DefaultDelay, err)`)
	if err != nil {
		t.Fatalf("a program of another module that imports %s: %v\n%s", mod, err, out)
	}
	if want := "1s weft: crawl: data directory is required\n"; out != want {
		t.Errorf("it printed %q, want %q", out, want)
	}

	out, err = build(t, `"`+mod+`/internal/crawl"`, `	fmt.Println(crawl.DefaultMaxLinksPerPage)`)
	if err == nil || !strings.Contains(out, "use of internal package") {
		t.Errorf("a program of another module built with %s/internal/crawl (err %v):\n%s", mod, err, out)
	}
}

// moduleOf reads the module's path from its go.mod, and its require
// blocks: a user's module, once tidy, lists the same modules (Go 1.17's
// pruned graphs), so the build needs no module's go.mod beyond them.
func moduleOf(t *testing.T, gomod string) (path, requires string) {
	b, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	var req strings.Builder
	inBlock := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case inBlock:
			req.WriteString(sc.Text() + "\n")
			inBlock = line != ")"
		case strings.HasPrefix(line, "require ("):
			req.WriteString(line + "\n")
			inBlock = true
		case strings.HasPrefix(line, "require "):
			req.WriteString(line + "\n")
		case strings.HasPrefix(line, "module "):
			path = strings.Trim(strings.TrimSpace(strings.TrimPrefix(line, "module ")), `"`)
		}
	}
	if path == "" {
		t.Fatalf("%s names no module", gomod)
	}
	return path, req.String()
}
