package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/wire"
)

func init() {
	register(
		Check{ID: "custom-domain-hostname-canonicalized", Group: "edge", Summary: "a custom domain hostname is stored and echoed canonical (no trailing dot, ASCII lowercase) with the canonical spec digest", Run: hostnameCanonicalized},
		Check{ID: "custom-domain-hostname-claim-unique", Group: "edge", Summary: "a canonical hostname is claimed once per tenant, across spaces", Run: hostnameClaimUnique},
		Check{ID: "custom-domain-hostname-claim-stops-at-the-tenant", Group: "edge", Summary: "another tenant's claim of a hostname neither blocks nor is blocked", Run: hostnameClaimStopsAtTenant},
		Check{ID: "custom-domain-u-label-refused", Group: "edge", Summary: "an internationalized hostname is accepted only as A-labels; a U-label is refused", Run: hostnameULabelRefused},
	)
}

func hostnameCanonicalized(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	label := "App-" + strings.ToUpper(randomHex(4))
	raw, canonical := label+".Example.COM.", strings.ToLower(label)+".example.com"
	spec := func(h string) map[string]any {
		return map[string]any{"worker": e.Rel("ModuleWorker", a.Worker.Metadata.Name), "hostname": h}
	}
	name := e.Name("domain")
	req, err := e.Request("WorkerCustomDomain", name, spec(raw))
	if err != nil {
		return err
	}
	if v, err := e.A1.Validate(ctx, req); err != nil || !v.Valid {
		return fmt.Errorf("validate %q: %v %v", raw, err, v)
	}
	p, err := e.A1.Prepare(ctx, req, "")
	if err != nil {
		return fmt.Errorf("prepare %q: %w", raw, err)
	}
	if got := edgeHostnameOf(p.Resource.Spec); got != canonical {
		return fmt.Errorf("prepare echoed hostname %q for %q, want %q", got, raw, canonical)
	}
	creq, _ := e.Request("WorkerCustomDomain", name, spec(canonical))
	pc, err := e.A1.Prepare(ctx, creq, "")
	if err != nil {
		return fmt.Errorf("prepare %q: %w", canonical, err)
	}
	if p.Review.SpecDigest != pc.Review.SpecDigest {
		return fmt.Errorf("%q has specDigest %s but its canonical form %q has %s; they are one desired state", raw, p.Review.SpecDigest, canonical, pc.Review.SpecDigest)
	}
	// Apply the spelling as written (not the echo): the host canonicalises
	// at its own entry point and the prepare binding holds.
	res, err := e.A1.ApplyAndWait(ctx, wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
		Spec: req.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
	if err != nil {
		return fmt.Errorf("apply %q with its prepare digest: %w", raw, err)
	}
	if got := edgeHostnameOf(res.Spec); got != canonical {
		return fmt.Errorf("apply stored hostname %q for %q, want %q", got, raw, canonical)
	}
	read, err := e.edgeRead(ctx, e.A1, res)
	if err != nil {
		return err
	}
	if got := edgeHostnameOf(read.Spec); got != canonical {
		return fmt.Errorf("read echoes hostname %q, want %q", got, canonical)
	}
	for _, h := range []string{canonical, strings.ToUpper(canonical) + "."} {
		again, err := e.Update(ctx, e.A1, read, spec(h))
		if err != nil {
			return fmt.Errorf("re-applying the domain as %q (the same desired state): %w", h, err)
		}
		if again.Metadata.Generation != read.Metadata.Generation || edgeHostnameOf(again.Spec) != canonical {
			return fmt.Errorf("re-applying as %q moved generation %s -> %s (hostname %q); it is the same desired state",
				h, read.Metadata.Generation, again.Metadata.Generation, edgeHostnameOf(again.Spec))
		}
	}
	return nil
}

func edgeHostnameOf(spec json.RawMessage) string {
	var s struct {
		Hostname string `json:"hostname"`
	}
	_ = json.Unmarshal(spec, &s)
	return s.Hostname
}

// edgeDomainSpec is a WorkerCustomDomain of worker at hostname.
func (e *Env) edgeDomainSpec(worker, hostname string) map[string]any {
	return map[string]any{"worker": e.Rel("ModuleWorker", worker), "hostname": hostname}
}

func hostnameClaimUnique(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	h := edgeHostname("claim")
	holder, err := e.Create(ctx, e.A1, "WorkerCustomDomain", e.Name("domain"), e.edgeDomainSpec(a.Worker.Metadata.Name, h))
	if err != nil {
		return err
	}
	other := e.Space + " other"
	b, err := e.edgeDeploy(ctx, e.A2, other, "fetch")
	if err != nil {
		return fmt.Errorf("deploy in space %q: %w", other, err)
	}
	refuse := func(what, space, worker, hostname string) error {
		name := e.Name("domain")
		_, err := e.edgeTryApply(ctx, e.A2, e.Creds.A2, space, "WorkerCustomDomain", name, e.edgeDomainSpec(worker, hostname), nil)
		if err := edgeRefused(err, wire.InvalidArgument); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return e.edgeAbsent(ctx, e.A2, space, "WorkerCustomDomain", name)
	}
	if err := refuse("the same hostname in another space of the tenant", other, b.Worker.Metadata.Name, h); err != nil {
		return err
	}
	if err := refuse("another spelling of the hostname in another space of the tenant", other, b.Worker.Metadata.Name, strings.ToUpper(h)+"."); err != nil {
		return err
	}
	c, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	if err := refuse("the same hostname for another worker in the same space", e.Space, c.Worker.Metadata.Name, h); err != nil {
		return err
	}
	// Deleting the holder releases the claim.
	if err := e.Delete(ctx, e.A1, holder); err != nil {
		return err
	}
	if _, err := e.edgeCreateIn(ctx, e.A2, other, "WorkerCustomDomain", e.Name("domain"), e.edgeDomainSpec(b.Worker.Metadata.Name, h)); err != nil {
		return fmt.Errorf("claiming the hostname in another space once its holder was deleted: %w", err)
	}
	return nil
}

func hostnameClaimStopsAtTenant(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	b, err := e.edgeDeploy(ctx, e.B, e.Space, "fetch")
	if err != nil {
		return fmt.Errorf("tenant B deploys in the same space name: %w", err)
	}
	h1, h2 := edgeHostname("tenant"), edgeHostname("tenant")
	mine, err := e.Create(ctx, e.A1, "WorkerCustomDomain", e.Name("domain"), e.edgeDomainSpec(a.Worker.Metadata.Name, h1))
	if err != nil {
		return err
	}
	theirs, err := e.edgeCreateIn(ctx, e.B, e.Space, "WorkerCustomDomain", e.Name("domain"), e.edgeDomainSpec(b.Worker.Metadata.Name, h1))
	if err != nil {
		return fmt.Errorf("tenant B claiming a hostname only tenant A holds: %w", err)
	}
	if _, err := e.edgeCreateIn(ctx, e.B, e.Space, "WorkerCustomDomain", e.Name("domain"), e.edgeDomainSpec(b.Worker.Metadata.Name, h2)); err != nil {
		return fmt.Errorf("tenant B claiming a fresh hostname: %w", err)
	}
	if _, err := e.Create(ctx, e.A1, "WorkerCustomDomain", e.Name("domain"), e.edgeDomainSpec(a.Worker.Metadata.Name, h2)); err != nil {
		return fmt.Errorf("tenant A claiming a hostname only tenant B holds: %w", err)
	}
	// Each tenant's claim still binds within the tenant.
	_, err = e.edgeTryApply(ctx, e.B, e.Creds.B, e.Space, "WorkerCustomDomain", e.Name("domain"), e.edgeDomainSpec(b.Worker.Metadata.Name, h1), nil)
	if err := edgeRefused(err, wire.InvalidArgument); err != nil {
		return fmt.Errorf("tenant B claiming %s twice: %w", h1, err)
	}
	for _, r := range []struct {
		c   *client.Client
		res *wire.Resource
	}{{e.A1, mine}, {e.B, theirs}} {
		got, err := e.edgeRead(ctx, r.c, r.res)
		if err != nil {
			return err
		}
		if got.Metadata.UID != r.res.Metadata.UID {
			return fmt.Errorf("the %s domain reads as uid %s, not %s", h1, got.Metadata.UID, r.res.Metadata.UID)
		}
	}
	if mine.Metadata.UID == theirs.Metadata.UID {
		return fmt.Errorf("two tenants' domains share uid %s", mine.Metadata.UID)
	}
	return nil
}

func hostnameULabelRefused(ctx context.Context, e *Env) error {
	a, err := e.DeployApp(ctx, e.A1, "fetch")
	if err != nil {
		return err
	}
	wn := a.Worker.Metadata.Name
	tag := randomHex(4)
	for _, h := range []string{"bücher-" + tag + ".example.com", "app-" + tag + ".例え.jp", "ÄPP-" + tag + ".example.com", "app-" + tag + ".xn--bcher-kva.bücher.example"} {
		if err := e.edgeSpecRefused(ctx, "WorkerCustomDomain", e.edgeDomainSpec(wn, h), fmt.Sprintf("hostname %q", h)); err != nil {
			return err
		}
	}
	if _, err := e.Create(ctx, e.A1, "WorkerCustomDomain", e.Name("domain"), e.edgeDomainSpec(wn, "app-"+tag+".xn--bcher-kva.example")); err != nil {
		return fmt.Errorf("the A-label form of an internationalized name: %w", err)
	}
	return nil
}
