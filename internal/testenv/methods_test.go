package testenv_test

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxMethods is the most methods a named type of the storage adapter or the
// domain may have (its method set, methods promoted from embedded fields
// included): past it the type is a second aggregate or service waiting to be
// split off (docs/ARCHITECTURE.md, Ports and stores).
const maxMethods = 40

// methodCapped are the packages whose types are held to maxMethods.
var methodCapped = []string{"internal/store", "internal/ticketing", "internal/inmem"}

func TestNoTypeHasTooManyMethods(t *testing.T) {
	root := filepath.Join("..", "..")
	exports := exportData(t, root, methodCapped)
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, os.ErrNotExist
		}
		return os.Open(f)
	})
	for _, dir := range methodCapped {
		fset := token.NewFileSet()
		files := parseDir(t, fset, filepath.Join(root, dir))
		conf := types.Config{Importer: imp.(types.ImporterFrom)}
		pkg, err := conf.Check("tix/"+dir, fset, files, nil)
		if err != nil {
			t.Fatalf("type-check %s: %v", dir, err)
		}
		counts := methodCounts(pkg)
		if len(counts) == 0 {
			t.Fatalf("%s: no named type found: the count is broken", dir)
		}
		for name, n := range counts {
			if n > maxMethods {
				t.Errorf("%s.%s has %d methods (at most %d): split it along the roles its users declare (docs/ARCHITECTURE.md, Ports and stores)",
					pkg.Name(), name, n, maxMethods)
			} else if testing.Verbose() && n > 20 {
				t.Logf("%s.%s: %d methods", pkg.Name(), name, n)
			}
		}
	}
}

// methodCounts is the size of the method set of *T (methods of T and *T, and
// those promoted from embedded fields) of every named type T of pkg.
func methodCounts(pkg *types.Package) map[string]int {
	counts := map[string]int{}
	for _, name := range pkg.Scope().Names() {
		tn, ok := pkg.Scope().Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		named, ok := tn.Type().(*types.Named)
		if !ok {
			continue
		}
		if types.IsInterface(named) {
			counts[name] = named.Underlying().(*types.Interface).NumMethods()
			continue
		}
		counts[name] = types.NewMethodSet(types.NewPointer(named)).Len()
	}
	return counts
}

// A type past the limit fails the count, one within it passes, embedded
// fields' methods included.
func TestMethodCountsIncludePromotedMethods(t *testing.T) {
	src := "package p\ntype inner struct{}\n"
	for _, m := range []string{"A", "B", "C"} {
		src += "func (inner) " + m + "() {}\n"
	}
	src += "type Outer struct{ *inner }\nfunc (o *Outer) D() {}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := (&types.Config{}).Check("p", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := methodCounts(pkg); got["Outer"] != 4 || got["inner"] != 3 {
		t.Fatalf("counts = %v, want Outer 4 (D and the promoted A, B, C), inner 3", got)
	}
}

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, fset *token.FileSet, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// exportData maps the import path of every dependency of dirs to its
// compiled export data (go list -export builds them into the build cache).
func exportData(t *testing.T, root string, dirs []string) map[string]string {
	t.Helper()
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}"}
	for _, d := range dirs {
		args = append(args, "./"+d)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, file, ok := strings.Cut(sc.Text(), " ")
		if ok && file != "" {
			m[path] = file
		}
	}
	return m
}
