package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/takoform/takoform/host/store"
)

// On a store that holds object bodies itself (store.ObjectBodies:
// PostgreSQL, shared by every replica; repo decision 0061), a body is a
// run of chunks of store.ObjectChunkBytes under a random name of the
// bucket instead of a file: written chunk by chunk while it is counted
// and hashed, read back chunk by chunk, so no replica holds more than a
// chunk of it in memory and every replica serves every object. A body
// written before the database held bodies (a file under --worker-data) is
// still read from that file, by the replica that holds it.

// writeChunks streams r into a new body of bucket as writeBody does for
// files: more than max bytes fails value_too_large, a count different
// from declared (≥ 0) or a read error invalid_body; on any failure the
// chunks already stored are deleted (or, failing that, swept).
func (g *Gateway) writeChunks(ctx context.Context, bucket, prefix string, r io.Reader, declared, max int64) (*written, *Error) {
	name, err := randomName(prefix)
	if err != nil {
		return nil, unavailable(err)
	}
	keep := false
	defer func() {
		if !keep {
			g.delivered(g.chunks.DeleteObjectBody(context.WithoutCancel(ctx), bucket, name))
		}
	}()
	h := sha256.New()
	buf := make([]byte, store.ObjectChunkBytes)
	lr := io.LimitReader(r, max+1)
	var n int64
	for seq := int64(0); ; seq++ {
		k, err := io.ReadFull(lr, buf)
		if k > 0 {
			n += int64(k)
			if n > max {
				return nil, errorf(http.StatusRequestEntityTooLarge, "value_too_large", "a body is at most %d bytes here; nothing was stored", max)
			}
			h.Write(buf[:k])
			if perr := g.chunks.PutObjectChunk(ctx, bucket, name, seq, buf[:k]); perr != nil {
				return nil, unavailable(perr)
			}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "invalid_body", "the body failed while it was read: %v; nothing was stored", err)
		}
	}
	if declared >= 0 && n != declared {
		return nil, errorf(http.StatusBadRequest, "invalid_body", "the body carried %d bytes but contentLength declared %d; nothing was stored", n, declared)
	}
	keep = true
	return &written{file: name, size: n, etag: hex.EncodeToString(h.Sum(nil))}, nil
}

// openBody opens n bytes of body file of bucket from offset: from its
// chunks on a store that holds bodies, else (and for a body written
// before it did) from its file. A body that is gone (replaced or deleted
// since its row was read) is an error wrapping os.ErrNotExist.
func (g *Gateway) openBody(ctx context.Context, bucket, file string, offset, n int64) (io.ReadCloser, error) {
	if g.chunks != nil {
		if n == 0 {
			return io.NopCloser(eofReader{}), nil
		}
		seq, skip := offset/store.ObjectChunkBytes, offset%store.ObjectChunkBytes
		first, err := g.chunks.ObjectChunk(ctx, bucket, file, seq)
		switch {
		case err == nil:
			if skip >= int64(len(first)) {
				return nil, fmt.Errorf("body %s of bucket %s: chunk %d holds %d bytes, not past %d: %w", file, bucket, seq, len(first), skip, os.ErrNotExist)
			}
			return &chunkReader{ctx: ctx, g: g, bucket: bucket, name: file, seq: seq, cur: first[skip:], left: n}, nil
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		case g.dataDir == "":
			return nil, fmt.Errorf("body %s of bucket %s: %w", file, bucket, os.ErrNotExist)
		}
	}
	f, err := os.Open(filepath.Join(g.bucketDir(bucket), file))
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.NewSectionReader(f, offset, n), f}, nil
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// chunkReader reads left bytes of a body from cur on, one chunk per
// store read.
type chunkReader struct {
	ctx          context.Context
	g            *Gateway
	bucket, name string
	seq          int64
	cur          []byte
	left         int64
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	if len(c.cur) == 0 {
		c.seq++
		next, err := c.g.chunks.ObjectChunk(c.ctx, c.bucket, c.name, c.seq)
		if errors.Is(err, store.ErrNotFound) {
			return 0, fmt.Errorf("body %s of bucket %s ended at chunk %d: the object was replaced or deleted while it was read: %w", c.name, c.bucket, c.seq, io.ErrUnexpectedEOF)
		}
		if err != nil {
			return 0, err
		}
		c.cur = next
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	k := copy(p, c.cur)
	c.cur, c.left = c.cur[k:], c.left-int64(k)
	return k, nil
}

func (c *chunkReader) Close() error { c.cur = nil; return nil }
