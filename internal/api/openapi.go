package api

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v4"
)

// openAPIYAML is the OpenAPI 3.1 description of the whole v1 contract, the
// single source the router serves and the tests validate responses against.
//
//go:embed openapi.yaml
var openAPIYAML []byte

var openAPIJSON struct {
	once sync.Once
	doc  []byte
	err  error
}

// OpenAPIJSON returns the embedded OpenAPI document converted to JSON, keeping
// the YAML's key order. The conversion runs once; callers must not modify the
// returned slice.
func OpenAPIJSON() ([]byte, error) {
	openAPIJSON.once.Do(func() {
		openAPIJSON.doc, openAPIJSON.err = yamlToJSON(openAPIYAML)
	})
	return openAPIJSON.doc, openAPIJSON.err
}

// relativeServer is servers[0] of the document as JSON: the relative /v1 that
// ServedOpenAPIJSON replaces with the configured public URL.
const relativeServer = `"servers":[{"url":"/v1"`

// ServedOpenAPIJSON is OpenAPIJSON with servers[0].url set to publicURL+"/v1"
// (publicURL: the API's configured base URL, TIX_PUBLIC_URL, without /v1).
// Without one it stays the relative /v1, which clients resolve against the
// URL they fetched the document from. It is never taken from the request's
// Host or X-Forwarded-Host: anyone can send those, and a cache in front would
// hand a forged server URL (where keys would be sent) to every later reader.
func ServedOpenAPIJSON(publicURL string) ([]byte, error) {
	doc, err := OpenAPIJSON()
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(doc, []byte(relativeServer)) {
		return nil, fmt.Errorf("openapi document: servers[0].url is not /v1")
	}
	if publicURL == "" {
		return doc, nil
	}
	url, _ := json.Marshal(strings.TrimRight(publicURL, "/") + "/v1")
	return bytes.Replace(doc, []byte(relativeServer), []byte(`"servers":[{"url":`+string(url)), 1), nil
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
