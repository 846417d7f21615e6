package api

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"testing"

	yaml "go.yaml.in/yaml/v4"
)

var update = flag.Bool("update", false, "rewrite openapi.json.gz from openapi.yaml")

// TestOpenAPIJSON_GeneratedFromYAML: the embedded openapi.json.gz is openapi.yaml
// converted (key order kept); -update rewrites it after the YAML changed.
func TestOpenAPIJSON_GeneratedFromYAML(t *testing.T) {
	src, err := os.ReadFile("openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := yamlToJSON(src)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		var gz bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // no name, no time: the same bytes each run
		if _, err := zw.Write(want); err != nil || zw.Close() != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("openapi.json.gz", gz.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got, err := OpenAPIJSON(); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("internal/api/openapi.json.gz is not openapi.yaml as JSON (%v): run go test ./internal/api -run TestOpenAPIJSON_GeneratedFromYAML -update", err)
	}
}

// yamlToJSON converts one YAML document to compact JSON. Mapping keys become
// JSON strings whatever their YAML type (an unquoted 200 becomes "200"), and
// mappings keep their order.
func yamlToJSON(src []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, fmt.Errorf("parse openapi yaml: %w", err)
	}
	var buf bytes.Buffer
	if err := encodeYAMLNodeJSON(&buf, &root); err != nil {
		return nil, fmt.Errorf("convert openapi yaml to json: %w", err)
	}
	if !json.Valid(buf.Bytes()) {
		return nil, fmt.Errorf("convert openapi yaml to json: produced invalid json")
	}
	return buf.Bytes(), nil
}

func encodeYAMLNodeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return fmt.Errorf("line %d: expected one document, got %d nodes", n.Line, len(n.Content))
		}
		return encodeYAMLNodeJSON(buf, n.Content[0])
	case yaml.AliasNode:
		return encodeYAMLNodeJSON(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: mapping key is not a scalar", k.Line)
			}
			if k.Value == "<<" && k.Tag == "!!merge" {
				return fmt.Errorf("line %d: YAML merge keys are not supported", k.Line)
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			key, err := json.Marshal(k.Value)
			if err != nil {
				return err
			}
			buf.Write(key)
			buf.WriteByte(':')
			if err := encodeYAMLNodeJSON(buf, v); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeYAMLNodeJSON(buf, item); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: scalar %q: %w", n.Line, n.Value, err)
		}
		buf.Write(b)
		return nil
	default:
		return fmt.Errorf("line %d: unexpected YAML node kind %v", n.Line, n.Kind)
	}
}
