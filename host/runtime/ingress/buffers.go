package ingress

import "sync"

// copyBuffer is the size of the buffers the proxy copies bodies through
// (httputil.ReverseProxy's own size).
const copyBuffer = 32 << 10

// bufferPool lends the proxy its copy buffers, so a request does not
// allocate and clear 32 KiB of its own (PERFORMANCE.md, log entry "The
// data plane on real workerd").
type bufferPool struct{ p sync.Pool }

var buffers = &bufferPool{}

func (b *bufferPool) Get() []byte {
	if v, ok := b.p.Get().(*[]byte); ok {
		return *v
	}
	return make([]byte, copyBuffer)
}

func (b *bufferPool) Put(buf []byte) {
	if cap(buf) >= copyBuffer {
		buf = buf[:copyBuffer]
		b.p.Put(&buf)
	}
}
