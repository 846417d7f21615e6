package api

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// structShapes reads the struct types of the non-test Go files in dir, each
// as its fields' JSON names, options and types (package qualifiers dropped):
// two types with one shape encode the same values to the same bytes.
func structShapes(t *testing.T, pkg, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	shapes := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			if st, ok := spec.Type.(*ast.StructType); ok && len(st.Fields.List) > 0 {
				shapes[pkg+"."+spec.Name.Name] = shapeOf(st)
			}
			return true
		})
	}
	return shapes
}

func shapeOf(st *ast.StructType) string {
	var b strings.Builder
	for _, f := range st.Fields.List {
		tag := ""
		if f.Tag != nil {
			tag = reflect.StructTag(strings.Trim(f.Tag.Value, "`")).Get("json")
		}
		typ := typeString(f.Type)
		if len(f.Names) == 0 {
			b.WriteString("embed " + typ + "; ")
			continue
		}
		for range f.Names {
			b.WriteString(tag + " " + typ + "; ")
		}
	}
	return b.String()
}

// typeString prints a type expression without package qualifiers.
func typeString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.StarExpr:
		return "*" + typeString(e.X)
	case *ast.ArrayType:
		return "[]" + typeString(e.Elt)
	case *ast.MapType:
		return "map[" + typeString(e.Key) + "]" + typeString(e.Value)
	default:
		return "?"
	}
}

// One struct per wire resource: no response type of the API repeats, field
// for field, a domain type whose JSON tags already give the wire bytes; the
// API sends the domain's type instead.
func TestWireTypes_NoMirrorOfADomainType(t *testing.T) {
	t.Parallel()
	api := structShapes(t, "api", ".")
	domain := map[string]string{}
	for _, dir := range []string{"../ticketing", "../webhook", "../emailjobs", "../auth"} {
		for name, shape := range structShapes(t, filepath.Base(dir), dir) {
			domain[name] = shape
		}
	}
	for name, shape := range api {
		for dname, dshape := range domain {
			if shape == dshape {
				t.Errorf("%s mirrors %s (%s): send %s itself", name, dname, shape, dname)
			}
		}
	}
}
