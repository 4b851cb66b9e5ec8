package cli

import (
	"net"
	"os"
	"strings"
	"testing"
)

// TestPeerURL: --peer-url is taken as scheme://host:port and anything
// else refused naming the form; without it the listener's address with
// the API's scheme, this machine's host name for a wildcard listener.
func TestPeerURL(t *testing.T) {
	loop := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	any := &net.TCPAddr{IP: net.IPv4zero, Port: 9090}
	host, err := os.Hostname()
	if err != nil {
		t.Skip("no host name here")
	}
	for _, c := range []struct {
		flag string
		addr net.Addr
		tls  bool
		want string
	}{
		{"", loop, false, "http://127.0.0.1:8080"},
		{"", loop, true, "https://127.0.0.1:8080"},
		{"", any, true, "https://" + net.JoinHostPort(host, "9090")},
		{"https://replica-1.internal:8443/", loop, false, "https://replica-1.internal:8443"},
	} {
		if got, err := peerURL(c.flag, c.addr, c.tls); err != nil || got != c.want {
			t.Errorf("peerURL(%q, %s, %v) = %q, %v; want %q", c.flag, c.addr, c.tls, got, err, c.want)
		}
	}
	for _, bad := range []string{"replica-1:8080", "ftp://x:1", "https://x:1/path", "https://x:1?q=1", "https://", "https://user:pw@x:1", "https://:8080"} {
		if _, err := peerURL(bad, loop, false); err == nil || !strings.Contains(err.Error(), "--peer-url takes the scheme, host and port") {
			t.Errorf("peerURL(%q) = %v; want the refusal naming the form", bad, err)
		}
	}
	for _, wild := range []string{"http://0.0.0.0:8080", "https://[::]:8443"} {
		if _, err := peerURL(wild, loop, false); err == nil || !strings.Contains(err.Error(), "which another replica cannot dial") {
			t.Errorf("peerURL(%q) = %v; want the refusal of a wildcard address", wild, err)
		}
	}
}
