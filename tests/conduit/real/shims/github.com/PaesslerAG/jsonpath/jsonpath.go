// Shim: github.com/PaesslerAG/jsonpath, which Debian does not package.
//
// Why: only Conduit's CLI imports it, for `conduit describe --jsonpath`
// (internal/cmd/cli/describe.go).  The fixture builds the CLI for manual
// use and never passes --jsonpath; with this shim that flag fails plainly.
package jsonpath

import "errors"

func Get(path string, value interface{}) (interface{}, error) {
	return nil, errors.New("--jsonpath is not available in this test build (PaesslerAG/jsonpath is not packaged by Debian)")
}
