package dashboard

import (
	"testing"

	"tix/internal/catalogimport"
)

const linesDoc = `{
  "events": [
    {
      "ref": "a",
      "tiers": [
        {"ref": "t1", "price": -5},
        {
          "ref": "t2",
          "price": 100
        }
      ]
    }
  ]
}`

// Each path of a catalog file starts on the line it is written on; a
// member on its name's line.
func TestJSONPathLines(t *testing.T) {
	got := jsonPathLines([]byte(linesDoc))
	for path, line := range map[string]int{
		"": 1, "events": 2, "events[0]": 3, "events[0].ref": 4, "events[0].tiers": 5,
		"events[0].tiers[0]": 6, "events[0].tiers[0].price": 6, "events[0].tiers[1]": 7, "events[0].tiers[1].price": 9,
	} {
		if got[path] != line {
			t.Errorf("%s: line %d, want %d", path, got[path], line)
		}
	}
}

// A problem goes beside the line the decoder named, else its path's line,
// else the nearest enclosing path's (a missing field: its object's line).
func TestProblemRows_PlaceEachProblemOnItsLine(t *testing.T) {
	rows := problemRows([]byte(linesDoc), catalogimport.ImportErrors{
		{Path: "events[0].tiers[0].price", Message: "must be >= 0"},
		{Path: "events[0].tiers[1].name", Message: "required"},
		{Path: "events[0].titel", Message: "unknown field", Line: 4, Column: 7},
		{Message: "the whole file"},
	})
	want := []struct { // in the file's order
		line   int
		source string
	}{{0, ""}, {4, `      "ref": "a",`}, {6, `        {"ref": "t1", "price": -5},`}, {7, `        {`}}
	for i, w := range want {
		if rows[i].Line != w.line || rows[i].Source != w.source {
			t.Errorf("problem %d on line %d %q, want %d %q", i, rows[i].Line, rows[i].Source, w.line, w.source)
		}
	}
}
