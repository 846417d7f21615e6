package testenv_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/ARCHITECTURE.md's Layout block is the one map of the code: every
// package directory under internal/ and functions/ is named in it, and it
// names none that is gone.
func TestArchitectureListsEveryPackage(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	listed := layoutPackages(t, string(doc))
	var missing, found []string
	for _, top := range []string{"internal", "functions"} {
		for _, dir := range packageDirs(t, root, top) {
			found = append(found, dir)
			if !slices.Contains(listed, dir) {
				missing = append(missing, dir)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/ARCHITECTURE.md's Layout does not name these packages (add a line each, e.g. \"  %s/ what it does\" under %s/):\n%s",
			strings.SplitN(missing[0], "/", 2)[1], strings.SplitN(missing[0], "/", 2)[0], strings.Join(missing, "\n"))
	}
	for _, dir := range listed {
		if (strings.HasPrefix(dir, "internal/") || strings.HasPrefix(dir, "functions/")) && !slices.Contains(found, dir) {
			t.Errorf("docs/ARCHITECTURE.md's Layout names %s/, which is not a package directory: remove or rename it", dir)
		}
	}
}

// layoutPackages reads the Layout section's code block as a tree: a line
// "top/  ..." opens a top-level directory, an indented line "  sub/dir/  ..."
// names top/sub/dir.
func layoutPackages(t *testing.T, doc string) []string {
	t.Helper()
	block := regexp.MustCompile("(?s)## Layout\n.*?```\n(.*?)```").FindStringSubmatch(doc)
	if block == nil {
		t.Fatal("docs/ARCHITECTURE.md has no ## Layout section with a code block")
	}
	entry := regexp.MustCompile(`^( *)([a-z0-9_]+(?:/[a-z0-9_]+)*)/(\s|$)`)
	var top string
	var out []string
	for _, line := range strings.Split(block[1], "\n") {
		m := entry.FindStringSubmatch(line)
		switch {
		case m == nil:
		case m[1] == "":
			top = m[2]
		case len(m[1]) == 2 && top != "":
			out = append(out, top+"/"+m[2])
		}
	}
	return out
}

// packageDirs lists the directories under root/top holding Go files, as
// slash paths from root (testdata is not a package).
func packageDirs(t *testing.T, root, top string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(filepath.Join(root, top), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			if rel = filepath.ToSlash(rel); !slices.Contains(dirs, rel) {
				dirs = append(dirs, rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}
