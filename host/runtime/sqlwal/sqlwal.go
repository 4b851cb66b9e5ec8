// Package sqlwal reads the pages a SQLite database in WAL mode committed:
// the frames of its write-ahead log up to the last commit frame, as the
// file format defines them (sqlite.org/fileformat2.html, "The
// Write-Ahead Log"). The gateway's owner of a SQLiteDatabase on a
// replicated host ships them to the store after each transaction
// (spec/runtime-v1.md §10.5; repo decision 0063).
package sqlwal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

const (
	headerBytes      = 32
	frameHeaderBytes = 24
	magicLE          = 0x377f0682 // checksums over little-endian words
	magicBE          = 0x377f0683 // checksums over big-endian words
)

// Commit is what the committed frames of a log hold: the last image of
// each page they wrote (page number, 1-based → pageSize bytes) and the
// database's size in pages after the last commit. Frames is how many
// frames that took; zero Frames means nothing was committed.
type Commit struct {
	Pages  map[int64][]byte
	Count  int64
	Frames int
}

// Read reads the log at path for a database of pageSize-byte pages. A
// missing or empty log commits nothing. Frames after the last commit
// frame (a transaction rolled back or still open), and any frame whose
// salts or checksum do not continue the chain (left over from before the
// log was restarted), are not part of it.
func Read(path string, pageSize int) (_ Commit, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return Commit{}, nil
	}
	if err != nil {
		return Commit{}, err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return read(bufio.NewReaderSize(f, 1<<16), pageSize)
}

func read(r io.Reader, pageSize int) (Commit, error) {
	var hdr [headerBytes]byte
	if _, err := io.ReadFull(r, hdr[:]); errors.Is(err, io.EOF) {
		return Commit{}, nil
	} else if err != nil {
		return Commit{}, fmt.Errorf("read the WAL header: %w", err)
	}
	var order binary.ByteOrder
	switch binary.BigEndian.Uint32(hdr[0:]) {
	case magicLE:
		order = binary.LittleEndian
	case magicBE:
		order = binary.BigEndian
	default:
		return Commit{}, fmt.Errorf("not a SQLite WAL: magic %#x", binary.BigEndian.Uint32(hdr[0:]))
	}
	if ps := int(binary.BigEndian.Uint32(hdr[8:])); ps != pageSize {
		return Commit{}, fmt.Errorf("the WAL has %d-byte pages, not %d", ps, pageSize)
	}
	s0, s1 := checksum(order, hdr[:24], 0, 0)
	if s0 != binary.BigEndian.Uint32(hdr[24:]) || s1 != binary.BigEndian.Uint32(hdr[28:]) {
		return Commit{}, errors.New("the WAL header's checksum does not match")
	}
	salt1, salt2 := binary.BigEndian.Uint32(hdr[16:]), binary.BigEndian.Uint32(hdr[20:])
	c := Commit{Pages: map[int64][]byte{}}
	pending := map[int64][]byte{}
	frame := make([]byte, frameHeaderBytes+pageSize)
	for n := 1; ; n++ {
		if _, err := io.ReadFull(r, frame); errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		} else if err != nil {
			return Commit{}, fmt.Errorf("read WAL frame %d: %w", n, err)
		}
		if binary.BigEndian.Uint32(frame[8:]) != salt1 || binary.BigEndian.Uint32(frame[12:]) != salt2 {
			break
		}
		t0, t1 := checksum(order, frame[:8], s0, s1)
		t0, t1 = checksum(order, frame[frameHeaderBytes:], t0, t1)
		if t0 != binary.BigEndian.Uint32(frame[16:]) || t1 != binary.BigEndian.Uint32(frame[20:]) {
			break
		}
		s0, s1 = t0, t1
		pgno := int64(binary.BigEndian.Uint32(frame[0:]))
		pending[pgno] = append([]byte(nil), frame[frameHeaderBytes:]...)
		if size := int64(binary.BigEndian.Uint32(frame[4:])); size != 0 { // a commit frame
			for p, d := range pending {
				c.Pages[p] = d
			}
			clear(pending)
			c.Count, c.Frames = size, n
		}
	}
	for p := range c.Pages {
		if p > c.Count {
			delete(c.Pages, p) // the database was truncated past it
		}
	}
	return c, nil
}

// checksum continues the WAL checksum (s0, s1) over b, whose length is a
// multiple of 8, reading 32-bit words in order.
func checksum(order binary.ByteOrder, b []byte, s0, s1 uint32) (uint32, uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}
