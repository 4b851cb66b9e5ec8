package runtimeabi

import (
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

func ans(status int, body string) *answer {
	return &answer{Status: status, Body: []byte(body)}
}

// TestVerifiersJudgeObservations feeds each check's verifier a good
// observation (it passes) and bad ones (each fails), so no verifier
// passes everything or nothing.
func TestVerifiersJudgeObservations(t *testing.T) {
	const p = `"probe":"takoform.runtime-abi-probe@v1"`
	cut := &answer{Status: 500, Body: []byte("half"), BodyErr: io.ErrUnexpectedEOF}
	floor := `"` + strings.Join(sortedFloor(), `","`) + `"`
	cases := []struct {
		name   string
		verify func(*answer) error
		good   *answer
		bad    []*answer
	}{
		{"6 handler", verifyHandler,
			ans(200, `{`+p+`,"argumentCount":3,"requestIsRequest":true,"requestMethod":"GET","envIsObject":true,"waitUntilIsFunction":true}`),
			[]*answer{
				ans(200, `{`+p+`,"argumentCount":2,"requestIsRequest":true,"requestMethod":"GET","envIsObject":true,"waitUntilIsFunction":true}`),
				ans(200, `{`+p+`,"argumentCount":3,"requestIsRequest":false,"requestMethod":"GET","envIsObject":true,"waitUntilIsFunction":true}`),
				ans(200, `{`+p+`,"argumentCount":3,"requestIsRequest":true,"requestMethod":"GET","envIsObject":true,"waitUntilIsFunction":false}`),
				ans(200, `{`+p+`,"argumentCount":3,"requestIsRequest":true,"requestMethod":"GET","envIsObject":true,"waitUntilIsFunction":true,"extra":1}`),
				ans(200, `{"argumentCount":3,"requestIsRequest":true,"requestMethod":"GET","envIsObject":true,"waitUntilIsFunction":true}`),
				ans(503, `503 Service Unavailable`),
			}},
		{"7 health", verifyHealth, ans(200, `{`+p+`,"ok":true}`),
			[]*answer{ans(200, `{`+p+`,"ok":false}`), ans(201, `{`+p+`,"ok":true}`), ans(200, `not json`), ans(200, `{"probe":"someone else's","ok":true}`)}},
		{"8 throw", verifyThrow, ans(500, "500 Internal Server Error"),
			[]*answer{ans(200, "fine"), ans(502, "bad gateway"), cut}},
		{"9 env", verifyEnv, ans(200, `{`+p+`,"propertyNames":["API_SIGNING_TOKEN_NAME","CACHE","EVENTS","LOG_LEVEL","PEER"]}`),
			[]*answer{
				ans(200, `{`+p+`,"propertyNames":["CACHE","EVENTS","LOG_LEVEL","PEER"]}`),
				ans(200, `{`+p+`,"propertyNames":["API_SIGNING_TOKEN_NAME","CACHE","EVENTS","LOG_LEVEL","PEER","__host"]}`),
				ans(200, `{`+p+`,"propertyNames":["CACHE","API_SIGNING_TOKEN_NAME","EVENTS","LOG_LEVEL","PEER"]}`),
				ans(200, `{`+p+`}`),
			}},
		{"10 globals", verifyGlobals, ans(200, `{`+p+`,"present":[`+floor+`],"missing":[]}`),
			[]*answer{
				ans(200, `{`+p+`,"present":[`+strings.Replace(floor, `,"structuredClone"`, "", 1)+`],"missing":["structuredClone"]}`),
				ans(200, `{`+p+`,"present":[`+strings.Replace(floor, `,"structuredClone"`, "", 1)+`],"missing":[]}`),
				ans(200, `{`+p+`,"present":[`+floor+`]}`),
			}},
	}
	for _, c := range cases {
		if err := c.verify(c.good); err != nil {
			t.Errorf("%s: a good observation failed: %v", c.name, err)
		}
		for i, b := range c.bad {
			if err := c.verify(b); err == nil {
				t.Errorf("%s: bad observation %d passed: %d %s", c.name, i, b.Status, b.Body)
			}
		}
	}
}

func sortedFloor() []string { return slices.Sorted(slices.Values(GlobalsFloor)) }

func TestKVStateJudgesBytes(t *testing.T) {
	const p = `"probe":"takoform.runtime-abi-probe@v1"`
	if found, err := kvState(ans(200, `{`+p+`,"found":true,"valueBase64":"AAECf3/+/1RBS09GT1JN"}`)); !found || err != nil {
		t.Errorf("the right bytes: found %v, %v", found, err)
	}
	if found, err := kvState(ans(200, `{`+p+`,"found":false}`)); found || err != nil {
		t.Errorf("not yet found: found %v, %v; want a poll on", found, err)
	}
	for _, bad := range []string{
		`{` + p + `,"found":true,"valueBase64":"AAECf3/vv73vv71UQUtPRk9STQ=="}`, // FE FF read back as text
		`{` + p + `,"found":true}`,
		`{` + p + `,"found":"yes"}`,
	} {
		if _, err := kvState(ans(200, bad)); err == nil {
			t.Errorf("%s passed", bad)
		}
	}
}

func TestWaitUntilVerifiers(t *testing.T) {
	const p = `"probe":"takoform.runtime-abi-probe@v1"`
	early := ans(200, `{`+p+`,"settled":false}`)
	if err := verifyWaitUntilEarly(early, 200*time.Millisecond); err != nil {
		t.Errorf("an early GET, not settled, in 200 ms: %v", err)
	}
	if err := verifyWaitUntilEarly(early, 1600*time.Millisecond); err == nil {
		t.Error("a POST and GET taking 1.6 s passed (the task may have run inline)")
	}
	if err := verifyWaitUntilEarly(ans(200, `{`+p+`,"settled":true,"afterRejection":true,"nonce":"n"}`), 100*time.Millisecond); err == nil {
		t.Error("settled at once passed")
	}
	if settled, err := waitUntilState(ans(200, `{`+p+`,"settled":true,"afterRejection":true,"nonce":"n"}`), "n"); !settled || err != nil {
		t.Errorf("settled after the rejection: %v %v", settled, err)
	}
	for _, bad := range []string{
		`{` + p + `,"settled":true,"afterRejection":false,"nonce":"n"}`,
		`{` + p + `,"settled":true,"afterRejection":true,"nonce":"other"}`,
		`{` + p + `,"settled":null}`,
	} {
		if _, err := waitUntilState(ans(200, bad), "n"); err == nil {
			t.Errorf("%s passed", bad)
		}
	}
}

// echo builds an observation: reads of sizes, each sent at the time
// given, the first firstLines before the second chunk; then the end.
func echo(firstLines int, peer string, reads ...[2]int) echoObservation {
	o := echoObservation{firstLines: firstLines}
	for i, r := range reads {
		o.lines = append(o.lines, echoLine{Read: i + 1, Bytes: r[0], sent: r[1], Peer: peer, text: "line"})
	}
	o.lines = append(o.lines, echoLine{End: true, Peer: peer, sent: 12288, text: "end"})
	return o
}

func TestVerifyEcho(t *testing.T) {
	good := echo(2, "", [2]int{2048, 4096}, [2]int{2048, 4096}, [2]int{8192, 12288})
	if err := verifyEcho(good, ""); err != nil {
		t.Errorf("a streamed echo failed: %v", err)
	}
	if err := verifyEcho(echo(1, PeerIdentity, [2]int{4096, 4096}, [2]int{8192, 12288}), PeerIdentity); err != nil {
		t.Errorf("a streamed echo through the peer failed: %v", err)
	}
	bad := map[string]echoObservation{
		"nothing before the second chunk": echo(0, "", [2]int{12288, 12288}),
		"only part accounted before":      echo(1, "", [2]int{1024, 4096}, [2]int{11264, 12288}),
		"more than sent":                  echo(1, "", [2]int{8192, 4096}, [2]int{4096, 12288}),
		"short in all":                    echo(1, "", [2]int{4096, 4096}, [2]int{4096, 12288}),
		"zero-byte read":                  echo(1, "", [2]int{4096, 4096}, [2]int{0, 12288}, [2]int{8192, 12288}),
		"no peer literal":                 echo(1, "someone-else", [2]int{4096, 4096}, [2]int{8192, 12288}),
	}
	noEnd := echo(1, "", [2]int{4096, 4096}, [2]int{8192, 12288})
	noEnd.lines = noEnd.lines[:len(noEnd.lines)-1]
	bad["no end line"] = noEnd
	skipped := echo(1, "", [2]int{4096, 4096}, [2]int{8192, 12288})
	skipped.lines[1].Read = 3
	bad["reads not numbered 1, 2, 3"] = skipped
	unclean := echo(1, "", [2]int{4096, 4096}, [2]int{8192, 12288})
	unclean.bodyErr = errors.New("connection reset")
	bad["an unclean end"] = unclean
	for name, o := range bad {
		peer := ""
		if name == "no peer literal" {
			peer = PeerIdentity
		}
		if err := verifyEcho(o, peer); err == nil {
			t.Errorf("%s passed", name)
		}
	}
}

func TestVerifyStream(t *testing.T) {
	t0 := time.Now()
	lines := func(peer string, gaps ...time.Duration) []arrived {
		var out []arrived
		at := t0
		for i, g := range gaps {
			at = at.Add(g)
			text := `{"chunk":` + string(rune('1'+i)) + `}`
			if peer != "" {
				text = `{"chunk":` + string(rune('1'+i)) + `,"peer":"` + peer + `"}`
			}
			out = append(out, arrived{text: text, at: at})
		}
		return out
	}
	ok := streamObservation{status: 200, contentLength: -1, delivered: 33, lines: lines("", 0, 250*time.Millisecond, 251*time.Millisecond)}
	if err := verifyStream(ok, ""); err != nil {
		t.Errorf("a streamed answer failed: %v", err)
	}
	viaPeer := ok
	viaPeer.lines = lines(PeerIdentity, 0, 200*time.Millisecond, 200*time.Millisecond)
	if err := verifyStream(viaPeer, PeerIdentity); err != nil {
		t.Errorf("a streamed answer through the peer failed: %v", err)
	}
	bad := map[string]streamObservation{
		"held then sent at once": {status: 200, contentLength: -1, lines: lines("", 0, time.Millisecond, time.Millisecond)},
		"two lines":              {status: 200, contentLength: -1, lines: lines("", 0, 300*time.Millisecond)},
		"wrong length":           {status: 200, contentLength: 99, delivered: 33, lines: lines("", 0, 300*time.Millisecond, 300*time.Millisecond)},
		"not 200":                {status: 503, contentLength: -1, lines: lines("", 0, 300*time.Millisecond, 300*time.Millisecond)},
		"unclean end":            {status: 200, contentLength: -1, lines: lines("", 0, 300*time.Millisecond, 300*time.Millisecond), bodyErr: io.ErrUnexpectedEOF},
	}
	for name, o := range bad {
		if err := verifyStream(o, ""); err == nil {
			t.Errorf("%s passed", name)
		}
	}
	if err := verifyStream(ok, PeerIdentity); err == nil {
		t.Error("lines without the peer literal passed check 15's verifier")
	}
}

func TestLoaderVerifiers(t *testing.T) {
	all := []string{"fetch", "scheduled", "queue"}
	if err := verifyExports(&loadAnswer{ExportedHandlers: all}, all); err != nil {
		t.Error(err)
	}
	for _, got := range [][]string{{"fetch"}, {"queue", "fetch", "scheduled"}, nil} {
		if verifyExports(&loadAnswer{ExportedHandlers: got}, all) == nil {
			t.Errorf("exportedHandlers %v passed", got)
		}
	}
	refusal := func(code string) *loadAnswer {
		a := &loadAnswer{}
		a.Error = &struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}{Code: code}
		return a
	}
	if verifyExports(refusal("module_not_found"), all) == nil {
		t.Error("a refusal passed check 1's verifier")
	}
	if err := verifyLoadError(refusal("module_not_found"), "module_not_found"); err != nil {
		t.Error(err)
	}
	if verifyLoadError(refusal("module_syntax_error"), "module_not_found") == nil || verifyLoadError(&loadAnswer{ExportedHandlers: all}, "module_not_found") == nil {
		t.Error("a wrong code or a load passed a refusal's verifier")
	}
}

// TestBundles: the peer's literal is in its module and nowhere in the
// probe's, so a probe answering for the peer cannot pass 14 and 15.
func TestBundles(t *testing.T) {
	if !strings.Contains(string(PeerSource), PeerIdentity) || strings.Contains(string(ProbeSource), PeerIdentity) {
		t.Fatal("PeerIdentity must be in the peer's module bytes and not in the probe's")
	}
	if !strings.Contains(string(ProbeSource), ProbeProtocol) {
		t.Fatal("the probe does not carry its protocol name")
	}
}
