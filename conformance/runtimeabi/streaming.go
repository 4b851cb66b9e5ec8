package runtimeabi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The bodies of checks 12 and 14 (spec/runtime-v1.md §8.3): a first chunk,
// a pause once it is accounted for, a second chunk.
const (
	firstChunk  = 4096
	secondChunk = 8192
	chunkPause  = 250 * time.Millisecond
	// streamGap is the gap checks 13 and 15 ask for; lines must arrive at
	// least minGap apart.
	streamGap = 250 * time.Millisecond
	minGap    = 125 * time.Millisecond
)

// arrived is one NDJSON line as it reached the client, or the body's end
// (eof, or err when it did not end cleanly).
type arrived struct {
	text string
	at   time.Time
	eof  bool
	err  error
}

// readLines sends each line of body as it arrives, then its end.
func readLines(body io.Reader, out chan<- arrived) {
	br := bufio.NewReader(body)
	for {
		s, err := br.ReadString('\n')
		if s != "" {
			out <- arrived{text: strings.TrimSuffix(s, "\n"), at: time.Now()}
		}
		if errors.Is(err, io.EOF) {
			out <- arrived{eof: true, at: time.Now()}
			return
		}
		if err != nil {
			out <- arrived{err: err, at: time.Now()}
			return
		}
	}
}

// next waits up to d for the next arrival.
func next(ctx context.Context, lines <-chan arrived, d time.Duration) (arrived, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case a := <-lines:
		return a, true
	case <-t.C:
		return arrived{}, false
	case <-ctx.Done():
		return arrived{}, false
	}
}

// echoLine is one line of an echo-stream answer: a read (n from 1, its
// byte count) or the end; sent is how many bytes the client had sent
// when it arrived.
type echoLine struct {
	Read  int    `json:"read"`
	Bytes int    `json:"bytes"`
	End   bool   `json:"end"`
	Peer  string `json:"peer"`
	sent  int
	text  string
}

// echoObservation is what checks 12 and 14 saw: the lines in order,
// firstLines of them before the second chunk was written, and how the
// body ended.
type echoObservation struct {
	lines      []echoLine
	firstLines int
	bodyErr    error
}

func checkEchoStream(ctx context.Context, r *Run) error { return r.echo(ctx, "echo-stream", "") }
func checkServiceEchoStream(ctx context.Context, r *Run) error {
	return r.echo(ctx, "service-echo-stream", PeerIdentity)
}

// echo is checks 12 and 14: the request body is sent in two chunks, the
// second only once the first is accounted for in the answer, each wait
// bounded by Options.Wait.
func (r *Run) echo(ctx context.Context, route, peer string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	defer pw.Close()
	req, err := r.o.Worker.request(ctx, "POST", route, pr)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	req.ContentLength = -1 // chunked: no declared length
	type result struct {
		resp *http.Response
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := r.o.Worker.http.Do(req)
		got <- result{resp, err}
	}()
	wrote := make(chan error, 2)
	write := func(n int) { _, err := pw.Write([]byte(strings.Repeat("x", n))); wrote <- err }
	go write(firstChunk)
	var res result
	select {
	case res = <-got:
	case <-time.After(r.o.Wait):
		return fmt.Errorf("no response head within %s of the first chunk while the request body is open: the head must leave while the body streams (spec/runtime-v1.md §2.3 S1, S3)", r.o.Wait)
	}
	if res.err != nil {
		return fmt.Errorf("POST %s: %w", route, res.err)
	}
	defer res.resp.Body.Close()
	if res.resp.StatusCode != 200 {
		b, _ := io.ReadAll(io.LimitReader(res.resp.Body, 4096))
		return fmt.Errorf("POST %s answered HTTP %d, want 200: %s", route, res.resp.StatusCode, abbreviate(b))
	}
	lines := make(chan arrived, 64)
	go readLines(res.resp.Body, lines)
	var o echoObservation
	total, sent, done := 0, firstChunk, false
	take := func(phase string, until func() bool) error {
		for !done && !until() {
			a, ok := next(ctx, lines, r.o.Wait)
			switch {
			case !ok:
				return fmt.Errorf("%s: nothing more within %s; %d of %d bytes sent accounted for", phase, r.o.Wait, total, sent)
			case a.err != nil:
				o.bodyErr, done = a.err, true
			case a.eof:
				done = true
			default:
				l := echoLine{sent: sent, text: a.text}
				_ = json.Unmarshal([]byte(a.text), &l)
				o.lines = append(o.lines, l)
				total += l.Bytes
			}
		}
		return nil
	}
	if err := take("after the first 4096 bytes (the rest held back)", func() bool { return total >= firstChunk }); err != nil {
		return fmt.Errorf("%w: the request body is buffered, not streamed (spec/runtime-v1.md §2.3 S2)", err)
	}
	o.firstLines = len(o.lines)
	if !done {
		if err := <-wrote; err != nil {
			return fmt.Errorf("sending the first chunk: %w", err)
		}
		if err := sleep(ctx, chunkPause); err != nil {
			return err
		}
		sent += secondChunk
		go func() {
			write(secondChunk)
			pw.Close()
		}()
		if err := take("after the whole body", func() bool { return false }); err != nil {
			return err
		}
	}
	return verifyEcho(o, peer)
}

// verifyEcho judges an echo observation (spec/runtime-v1.md §8.3 rows 12
// and 14): reads numbered 1, 2, 3… across both chunks, each with bytes,
// the running total never above what was sent, all 4096 accounted before
// the second chunk, then all 12288 and the end line; with peer set, every
// counted line carries it.
func verifyEcho(o echoObservation, peer string) error {
	total, n := 0, 0
	for i, l := range o.lines {
		if l.End {
			if i != len(o.lines)-1 {
				return fmt.Errorf("lines follow the end line")
			}
			break
		}
		n++
		if l.Read != n || l.Bytes <= 0 {
			return fmt.Errorf("line %d is %s, want read %d with bytes > 0", i+1, l.text, n)
		}
		if peer != "" && l.Peer != peer {
			return fmt.Errorf("line %d is %s: it does not carry the peer's identity %q, so the callee did not write it (spec/runtime-v1.md §8.2)", i+1, l.text, peer)
		}
		total += l.Bytes
		if total > l.sent {
			return fmt.Errorf("line %d accounts for %d bytes when only %d were sent", i+1, total, l.sent)
		}
		if i+1 == o.firstLines && total != firstChunk {
			return fmt.Errorf("%d bytes accounted for before the second chunk, want all %d", total, firstChunk)
		}
	}
	if o.firstLines == 0 {
		return fmt.Errorf("no line accounted for the first %d bytes before the second chunk was sent", firstChunk)
	}
	if len(o.lines) == 0 || !o.lines[len(o.lines)-1].End {
		return fmt.Errorf("the answer has no end line after %d bytes accounted for", total)
	}
	if total != firstChunk+secondChunk {
		return fmt.Errorf("%d bytes accounted for in all, want %d", total, firstChunk+secondChunk)
	}
	if o.bodyErr != nil {
		return fmt.Errorf("the answer did not end cleanly: %v", o.bodyErr)
	}
	return nil
}

// streamObservation is what checks 13 and 15 saw.
type streamObservation struct {
	status        int
	contentLength int64 // -1: none declared
	delivered     int64
	lines         []arrived
	bodyErr       error
}

func checkStream(ctx context.Context, r *Run) error { return r.stream(ctx, "stream", "") }
func checkServiceStream(ctx context.Context, r *Run) error {
	return r.stream(ctx, "service-stream", PeerIdentity)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// stream is checks 13 and 15: three lines 250 ms apart, each line's
// arrival timed by the client.
func (r *Run) stream(ctx context.Context, route, peer string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := r.o.Worker.request(ctx, "GET", fmt.Sprintf("%s?chunks=3&gapMillis=%d", route, streamGap.Milliseconds()), nil)
	if err != nil {
		return err
	}
	type result struct {
		resp *http.Response
		err  error
	}
	got := make(chan result, 1)
	go func() {
		resp, err := r.o.Worker.http.Do(req)
		got <- result{resp, err}
	}()
	var res result
	select {
	case res = <-got:
	case <-time.After(r.o.Wait):
		return fmt.Errorf("no response head within %s", r.o.Wait)
	}
	if res.err != nil {
		return fmt.Errorf("GET %s: %w", route, res.err)
	}
	defer res.resp.Body.Close()
	o := streamObservation{status: res.resp.StatusCode, contentLength: res.resp.ContentLength}
	body := &countingReader{r: res.resp.Body}
	lines := make(chan arrived, 16)
	go readLines(body, lines)
	for {
		a, ok := next(ctx, lines, r.o.Wait)
		if !ok {
			return fmt.Errorf("nothing more within %s after %d lines", r.o.Wait, len(o.lines))
		}
		if a.eof || a.err != nil {
			o.bodyErr = a.err
			break
		}
		o.lines = append(o.lines, a)
	}
	o.delivered = body.n
	return verifyStream(o, peer)
}

// verifyStream judges a stream observation (spec/runtime-v1.md §8.3 rows 13
// and 15): 200, three lines each at least 125 ms after the previous, a
// clean end, a declared length equal to the bytes delivered; with peer
// set, every line carries it.
func verifyStream(o streamObservation, peer string) error {
	if o.status != 200 {
		return fmt.Errorf("answered HTTP %d, want 200", o.status)
	}
	if len(o.lines) != 3 {
		return fmt.Errorf("%d lines arrived, want 3", len(o.lines))
	}
	for i, l := range o.lines {
		var m struct{ Peer string }
		if err := json.Unmarshal([]byte(l.text), &m); err != nil {
			return fmt.Errorf("line %d is not JSON: %q", i+1, l.text)
		}
		if peer != "" && m.Peer != peer {
			return fmt.Errorf("line %d is %s: it does not carry the peer's identity %q, so the callee did not write it (spec/runtime-v1.md §8.2)", i+1, l.text, peer)
		}
		if i > 0 {
			if gap := l.at.Sub(o.lines[i-1].at); gap < minGap {
				return fmt.Errorf("line %d arrived %s after line %d, want at least %s: the response body was held, not flushed chunk by chunk (spec/runtime-v1.md §2.3 S4)", i+1, gap.Round(time.Millisecond), i, minGap)
			}
		}
	}
	if o.bodyErr != nil {
		return fmt.Errorf("the body did not end cleanly: %v", o.bodyErr)
	}
	if o.contentLength >= 0 && o.contentLength != o.delivered {
		return fmt.Errorf("declared content-length %d, delivered %d bytes (spec/runtime-v1.md §2.3 S5)", o.contentLength, o.delivered)
	}
	return nil
}
