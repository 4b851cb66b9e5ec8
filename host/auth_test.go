package host_test

import (
	"context"
	"errors"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/host"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// TestVerifiedTokensFollowTheTable: the host remembers tokens it has
// matched (repo decision 0019), but a token removed by SetTokens is refused on the
// next request, and a remembered token still maps to its own caller.
func TestVerifiedTokensFollowTheTable(t *testing.T) {
	h := hosttest.Start(t, hosttest.Options{})
	ctx := context.Background()
	a1, err := client.New(ctx, h.URL, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := client.New(ctx, h.URL, client.Options{Token: hosttest.TokenB})
	if err != nil {
		t.Fatal(err)
	}
	req := kvRequest(t, a1, "mine")
	res, err := prepareApply(ctx, a1, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := client.Address{Space: req.Metadata.Space, Ref: res.Form.FormRef, Name: res.Metadata.Name}
	for range 2 { // the second round answers from the remembered tokens
		if _, err := a1.Read(ctx, addr); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Read(ctx, addr); !isCode(err, wire.ResourceNotFound) {
			t.Fatalf("tenant b reads tenant a's resource: %v", err)
		}
	}
	h.Server.SetTokens([]host.Token{{SHA256: host.HashToken(hosttest.TokenB), Tenant: "tenant-b", Principal: "principal-1"}})
	if _, err := a1.Read(ctx, addr); !isCode(err, wire.Unauthenticated) {
		t.Fatalf("a removed token still authenticates: %v", err)
	}
	if _, err := b.Read(ctx, addr); !isCode(err, wire.ResourceNotFound) {
		t.Fatalf("a kept token: %v", err)
	}
}

func isCode(err error, c wire.Code) bool {
	var we *wire.Error
	return errors.As(err, &we) && we.Code == c
}
