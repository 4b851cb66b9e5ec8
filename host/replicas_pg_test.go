package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/takoform/takoform/client"
	"github.com/takoform/takoform/conformance"
	"github.com/takoform/takoform/host/store/postgres/pgtest"
	"github.com/takoform/takoform/internal/hosttest"
	"github.com/takoform/takoform/wire"
)

// A lost database answers backend_unavailable (503, retryable), never a
// 500, and never logs the URL's password; when the database returns, the
// replica answers again at once.
func TestPostgresLostDatabaseAnswersBackendUnavailable(t *testing.T) {
	db := pgtest.URL(t)
	proxy, via := pgtest.NewProxy(t, db)
	var logs syncBuffer
	base := hosttest.Start(t, hosttest.Options{Data: via, Logger: slog.New(slog.NewTextHandler(&logs, nil))}).URL
	c, err := client.New(context.Background(), base, client.Options{Token: hosttest.TokenA1, Retry: client.RetryPolicy{Attempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	req := kvRequest(t, c, "before")
	if _, err := pgCreate(c, req); err != nil {
		t.Fatal(err)
	}
	addr := client.Address{Space: req.Metadata.Space, Ref: req.Form.FormRef, Name: req.Metadata.Name}

	proxy.Down()
	_, err = c.Read(context.Background(), addr)
	wantUnavailable(t, "read while the database is down", err)
	_, err = pgCreate(c, kvRequest(t, c, "during"))
	wantUnavailable(t, "create while the database is down", err)
	// The answer asks for the retry a second later (Retry-After: 1), the
	// wait the client's and the provider's 3 attempts take between them.
	q := url.Values{"space": {req.Metadata.Space}, "group": {req.Form.FormRef.APIVersion}, "kind": {req.Form.FormRef.Kind},
		"definitionVersion": {req.Form.FormRef.DefinitionVersion}, "schemaDigest": {req.Form.FormRef.SchemaDigest}}
	get, err := http.NewRequest(http.MethodGet, base+wire.V1alpha3.APIBase+"/resources/"+req.APIVersion+"/"+req.Kind+"/"+req.Metadata.Name+"?"+q.Encode(), nil)
	if err != nil {
		t.Fatal(err)
	}
	get.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
	if resp, err := http.DefaultClient.Do(get); err != nil {
		t.Error(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "1" {
			t.Errorf("raw read while the database is down: %d with Retry-After %q, want 503 with 1", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	if !strings.Contains(logs.String(), "store unavailable") {
		t.Errorf("the host logged no store-unavailable line:\n%s", logs.String())
	}
	pgtest.NoPassword(t, db, "the host log", logs.String())

	proxy.Up()
	if _, err := c.Read(context.Background(), addr); err != nil {
		t.Fatalf("first read after the database returned: %v", err)
	}
	if _, err := pgCreate(c, kvRequest(t, c, "after")); err != nil {
		t.Fatalf("create after the database returned: %v", err)
	}
}

func pgCreate(c *client.Client, req wire.ResourceRequest) (*wire.Resource, error) {
	p, err := c.Prepare(context.Background(), req, "")
	if err != nil {
		return nil, err
	}
	return c.ApplyAndWait(context.Background(), wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form,
		Metadata: req.Metadata, Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}}, client.Precondition{})
}

func wantUnavailable(t *testing.T, what string, err error) {
	t.Helper()
	var we *wire.Error
	if !errors.As(err, &we) || we.Code != wire.BackendUnavailable || !wire.Taxonomy[we.Code].Retryable || we.Status() != 503 {
		t.Errorf("%s: got %v, want a retryable backend_unavailable (503)", what, err)
	}
}

// pgReplica starts one host replica on the PostgreSQL database at dbURL
// and returns its URL.
func pgReplica(t *testing.T, dbURL string) string {
	t.Helper()
	return hosttest.Start(t, hosttest.Options{Data: dbURL}).URL
}

func rawPut(t *testing.T, base string, req wire.ResourceRequest, body []byte, key string) rawAnswer {
	t.Helper()
	r, err := http.NewRequest(http.MethodPut, base+wire.V1alpha3.APIBase+"/resources/"+req.APIVersion+"/"+req.Kind+"/"+req.Metadata.Name, bytes.NewReader(body))
	if err != nil {
		t.Error(err)
		return rawAnswer{}
	}
	r.Header.Set("Authorization", "Bearer "+hosttest.TokenA1)
	r.Header.Set("If-None-Match", "*")
	r.Header.Set(wire.HeaderIdempotency, key)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Error(err)
		return rawAnswer{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Error(err)
	}
	return rawAnswer{status: resp.StatusCode, etag: resp.Header.Get("ETag"), body: b}
}

// One Idempotency-Key sent to two replicas at the same moment executes
// once: both answer the same bytes (one executed, the other replays), and
// one resource exists. The prepare digest made by A verifies on B.
func TestPostgresTwinKeyExecutesOnce(t *testing.T) {
	db := pgtest.URL(t)
	a, b := pgReplica(t, db), pgReplica(t, db)
	c := connect(t, a)
	for round := range 12 {
		req := kvRequest(t, c, fmt.Sprintf("twin-%02d", round))
		p, err := c.Prepare(context.Background(), req, "")
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(wire.ApplyRequest{APIVersion: req.APIVersion, Kind: req.Kind, Form: req.Form, Metadata: req.Metadata,
			Spec: p.Resource.Spec, Review: wire.Review{PrepareDigest: p.Review.PrepareDigest}})
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("twin-key-%02d", round)
		var answers [2]rawAnswer
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, base := range []string{a, b} {
			wg.Go(func() {
				<-start
				answers[i] = rawPut(t, base, req, body, key)
			})
		}
		close(start)
		wg.Wait()
		if answers[0].status != 201 || answers[1].status != 201 {
			t.Fatalf("round %d: statuses %d (A) and %d (B), want 201 from both (one executes, one replays): %s / %s",
				round, answers[0].status, answers[1].status, answers[0].body, answers[1].body)
		}
		if !bytes.Equal(answers[0].body, answers[1].body) || answers[0].etag != answers[1].etag {
			t.Fatalf("round %d: the two replicas answered different bytes:\n A %s\n B %s", round, answers[0].body, answers[1].body)
		}
		var res wire.Resource
		if err := json.Unmarshal(answers[0].body, &res); err != nil {
			t.Fatal(err)
		}
		got, err := connect(t, b).Read(context.Background(), client.Address{Space: req.Metadata.Space, Ref: req.Form.FormRef, Name: req.Metadata.Name})
		if err != nil {
			t.Fatal(err)
		}
		if got.Metadata.UID != res.Metadata.UID || got.Metadata.Generation != res.Metadata.Generation {
			t.Fatalf("round %d: stored %s generation %s, answered %s generation %s", round,
				got.Metadata.UID, got.Metadata.Generation, res.Metadata.UID, res.Metadata.Generation)
		}
	}
}

// replicaEnvs returns conformance environments on two replicas of one
// database, sharing one space.
func replicaEnvs(t *testing.T) (*conformance.Env, *conformance.Env) {
	t.Helper()
	db := pgtest.URL(t)
	creds := conformance.Credentials{A1: hosttest.TokenA1, A2: hosttest.TokenA2, B: hosttest.TokenB}
	ea, err := conformance.NewEnv(context.Background(), pgReplica(t, db), creds, false)
	if err != nil {
		t.Fatal(err)
	}
	eb, err := conformance.NewEnv(context.Background(), pgReplica(t, db), creds, false)
	if err != nil {
		t.Fatal(err)
	}
	eb.Space = ea.Space
	return ea, eb
}

// race creates one resource through each replica at the same moment and
// returns both errors.
func race(ea, eb *conformance.Env, kind string, specA, specB map[string]any) [2]error {
	var errs [2]error
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, e := range []*conformance.Env{ea, eb} {
		spec := specA
		if i == 1 {
			spec = specB
		}
		wg.Go(func() {
			<-start
			_, errs[i] = e.Create(context.Background(), e.A1, kind, e.Name("race"), spec)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// admitted counts the creates that succeeded; every other must be a
// refusal of the lane (never an internal error).
func admitted(t *testing.T, what string, errs [2]error) int {
	t.Helper()
	n := 0
	for _, err := range errs {
		var we *wire.Error
		switch {
		case err == nil:
			n++
		case !errors.As(err, &we) || we.Code == wire.InternalError:
			t.Errorf("%s: the create not admitted failed with %v, want a refusal", what, err)
		}
	}
	return n
}

// Conflicting creates through two replicas at the same moment admit
// exactly one: two active deployments of one worker (a rule the host
// checks by reading, held by SERIALIZABLE), and one hostname claimed
// twice (a unique claim).
func TestPostgresConflictingCreatesAdmitOne(t *testing.T) {
	ea, eb := replicaEnvs(t)
	ctx := context.Background()
	for round := range 6 {
		app := &conformance.App{}
		var err error
		if app.Worker, err = ea.Create(ctx, ea.A1, "ModuleWorker", ea.Name("worker"), map[string]any{}); err != nil {
			t.Fatal(err)
		}
		if err := ea.AddVersion(ctx, ea.A1, app, "fetch"); err != nil {
			t.Fatal(err)
		}
		deployment := map[string]any{
			"worker":   conformance.Rel("ModuleWorker", app.Worker.Metadata.Name),
			"versions": []any{map[string]any{"weight": 10000, "workerVersion": conformance.Rel("WorkerVersion", app.Version.Metadata.Name)}},
		}
		errs := race(ea, eb, "WorkerDeployment", deployment, deployment)
		if admitted(t, "two deployments", errs) != 1 {
			t.Fatalf("round %d: two deployments of one worker through two replicas: errors %v, want exactly one admitted", round, errs)
		}

		// The hostname's two claimants are domains of different workers, so
		// nothing but the claim itself is shared.
		other, err := ea.DeployApp(ctx, ea.A1, "fetch")
		if err != nil {
			t.Fatal(err)
		}
		hostname := fmt.Sprintf("race-%d.example.com", round)
		domainA := map[string]any{"worker": conformance.Rel("ModuleWorker", app.Worker.Metadata.Name), "hostname": hostname}
		domainB := map[string]any{"worker": conformance.Rel("ModuleWorker", other.Worker.Metadata.Name), "hostname": hostname}
		errs = race(ea, eb, "WorkerCustomDomain", domainA, domainB)
		if admitted(t, "one hostname twice", errs) != 1 {
			t.Fatalf("round %d: one hostname claimed through two replicas: errors %v, want exactly one admitted", round, errs)
		}
	}
}

func connect(t *testing.T, base string) *client.Client {
	t.Helper()
	c, err := client.New(context.Background(), base, client.Options{Token: hosttest.TokenA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
