// Package runtimeabi holds Takoform's own runtime checks: the 18
// behaviours of spec/runtime-v1.md §8.3, measured black-box against any
// host through its Host API (the set-up that deploys the conformance
// deployment of §8.1) and its worker URL (the probe protocol of §8.2),
// with our own probe and peer bundles written from §8.2 alone.
// `takoform conformance runtime` runs them against any host; `make test`
// runs them against ours on real workerd.
//
// Checks 1–5 need the loader adapter of spec/runtime-v1.md §7 and are
// reported unmeasured when a run has none; 17 and 18 wait for the host's
// own cron and queue deliveries (up to 150 s and 60 s).
package runtimeabi

import (
	_ "embed"
)

// ProbeProtocol is the member every probe JSON answer carries
// (spec/runtime-v1.md §8.2).
const ProbeProtocol = "takoform.runtime-abi-probe@v1"

// PeerIdentity is the literal our peer stamps on every line it writes
// (spec/runtime-v1.md §8.2): only PeerSource carries it, so a probe
// answering for the peer cannot pass checks 14 and 15.
const PeerIdentity = "takoform-runtime-checks-peer-5c2e90d7b41f86a3"

// ProbeSource is our probe module (one ES module, main module index.js):
// the routes of spec/runtime-v1.md §8.2 under /abi/, and the scheduled
// and queue handlers that record what they were given.
//
//go:embed probe.js
var ProbeSource []byte

// PeerSource is our peer module: echo-stream and stream only, every line
// stamped with PeerIdentity.
//
//go:embed peer.js
var PeerSource []byte
