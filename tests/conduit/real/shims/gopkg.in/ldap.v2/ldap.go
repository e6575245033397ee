// Shim: gopkg.in/ldap.v2 over Debian's go-ldap v3 (golang-github-go-ldap-ldap-dev).
//
// Why: Conduit's server (internal/server/grpcserver/ldap.go) imports the
// old gopkg.in/ldap.v2, which Debian does not package; its successor
// github.com/go-ldap/ldap/v3 has the same API for what Conduit calls.
// Only those names are here.  The fixture sets no ldap.host, so this code
// is compiled but never run by the tests.
package ldap

import (
	"time"

	v3 "github.com/go-ldap/ldap/v3"
)

type (
	Conn          = v3.Conn
	Entry         = v3.Entry
	SearchRequest = v3.SearchRequest
	SearchResult  = v3.SearchResult
	Control       = v3.Control
)

const (
	ScopeWholeSubtree = v3.ScopeWholeSubtree
	NeverDerefAliases = v3.NeverDerefAliases
)

// DefaultTimeout is v2's package variable; Dial hands it to v3's.
var DefaultTimeout = 60 * time.Second

var NewSearchRequest = v3.NewSearchRequest

func Dial(network, addr string) (*Conn, error) {
	v3.DefaultTimeout = DefaultTimeout
	return v3.Dial(network, addr)
}
