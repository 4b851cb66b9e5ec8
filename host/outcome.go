package host

import (
	"github.com/takoform/takoform/host/lifecycle"
	"github.com/takoform/takoform/host/store"
)

// outcomeAnswer turns a committed mutation (lifecycle.Engine.Commit) into
// its answer (spec/host-api-v1alpha3.md §3.4 (5), (7), (8), (9)): a delete
// is 204 without a body; an observe 200 with {"resource": …}; an apply or
// import 201 when it created the incarnation, else 200, with the
// resource's answer bytes, the ones the engine handed the store, so the
// reply, its replay and the exact read are byte-identical (repo decision
// 0065).
func outcomeAnswer(o *lifecycle.Outcome) answer {
	switch o.Action {
	case store.ActionDelete:
		return answer{status: 204}
	case store.ActionObserve:
		return answer{status: 200, etag: etag(o.Resource), body: lifecycle.ObserveBody(o.Resource)}
	}
	if o.Created {
		return resourceAnswer(201, o.Resource)
	}
	return resourceAnswer(200, o.Resource)
}

func etag(res *store.Resource) string { return revisionETag(res.Revision) }

// revisionETag is the ETag of a resource at revision rev, the revision
// quoted (spec/host-api-v1alpha3.md §1.5).
func revisionETag(rev int64) string { return `"` + formatCounter(rev) + `"` }

// resourceAnswer is res's answer with the given status: the body the
// engine last handed the store with res, else encoded now
// (lifecycle.AnswerBytes).
func resourceAnswer(status int, res *store.Resource) answer {
	return answer{status: status, etag: etag(res), body: lifecycle.AnswerBytes(res)}
}
