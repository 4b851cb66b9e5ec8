package wire

import (
	"encoding/json"
	"slices"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/ijson"
)

// The hand-written decoders of the bodies every create carries both ways
// (ijson.FastDecoder): ijson.UnmarshalChecked tries them before the
// library, which reads whatever they decline — an escaped string, a null,
// a member of another type or name — and alone words every refusal.
// decode_test.go compares them with the library on a table and a fuzz
// target (spec/decisions/0040-create-path-fast-paths.md).

// ReadIJSON decodes a ResourceRequest (ijson.FastDecoder).
func (v *ResourceRequest) ReadIJSON(data []byte) bool {
	r := ijson.NewReader(data)
	var out ResourceRequest
	readResource(r, requestCore(&out), nil)
	return assign(r, v, out)
}

// ReadIJSON decodes an ApplyRequest (ijson.FastDecoder).
func (v *ApplyRequest) ReadIJSON(data []byte) bool {
	r := ijson.NewReader(data)
	var out ApplyRequest
	readResource(r, core{&out.APIVersion, &out.Kind, &out.Form, &out.Metadata, &out.Spec}, func(name string) bool {
		switch name {
		case "review":
			readStrings(r, []string{"prepareDigest"}, []*string{&out.Review.PrepareDigest})
		case "expectedUid":
			out.ExpectedUID = r.String()
		case "expectedGeneration":
			out.ExpectedGeneration = r.String()
		default:
			return false
		}
		return true
	})
	return assign(r, v, out)
}

// ReadIJSON decodes a PrepareResponse (ijson.FastDecoder).
func (v *PrepareResponse) ReadIJSON(data []byte) bool {
	r := ijson.NewReader(data)
	var out PrepareResponse
	r.Object()
	for name, ok := r.Member(); ok; name, ok = r.Member() {
		switch name {
		case "resource":
			readResource(r, requestCore(&out.Resource), nil)
		case "review":
			readStrings(r, []string{"prepareDigest", "specDigest"}, []*string{&out.Review.PrepareDigest, &out.Review.SpecDigest})
		default:
			r.Fail()
		}
	}
	return assign(r, v, out)
}

// ReadIJSON decodes a Resource (ijson.FastDecoder).
func (v *Resource) ReadIJSON(data []byte) bool {
	r := ijson.NewReader(data)
	var out Resource
	readResource(r, core{&out.APIVersion, &out.Kind, &out.Form, &out.Metadata, &out.Spec}, func(name string) bool {
		if name != "status" {
			return false
		}
		readStatus(r, &out.Status)
		return true
	})
	return assign(r, v, out)
}

// core is where the members of the resource core every request and
// answer shares are read to.
type core struct {
	apiVersion, kind *string
	form             *FormReference
	metadata         *Metadata
	spec             *json.RawMessage
}

func requestCore(v *ResourceRequest) core {
	return core{&v.APIVersion, &v.Kind, &v.Form, &v.Metadata, &v.Spec}
}

// readResource reads an object of the resource core's members and, for
// any other name, extra's (nil or false: a name neither reads fails).
func readResource(r *ijson.Reader, c core, extra func(name string) bool) {
	r.Object()
	for name, ok := r.Member(); ok; name, ok = r.Member() {
		if !readCore(r, name, c) && (extra == nil || !extra(name)) {
			r.Fail()
		}
	}
}

// assign sets *v to out when the read was exact (ijson.Reader.OK).
func assign[T any](r *ijson.Reader, v *T, out T) bool {
	if !r.OK() {
		return false
	}
	*v = out
	return true
}

func readStatus(r *ijson.Reader, st *Status) {
	r.Object()
	for name, ok := r.Member(); ok; name, ok = r.Member() {
		switch name {
		case "observedGeneration":
			st.ObservedGeneration = r.String()
		case "conditions":
			st.Conditions = []Condition{}
			r.Array()
			for r.Next() {
				var c Condition
				readStrings(r, []string{"type", "status", "reason", "lastTransitionTime", "hostReason", "message"},
					[]*string{&c.Type, &c.Status, &c.Reason, &c.LastTransitionTime, &c.HostReason, &c.Message})
				st.Conditions = append(st.Conditions, c)
			}
		case "observed":
			st.Observed = r.Raw()
		case "outputs":
			st.Outputs = r.Raw()
		default:
			r.Fail()
		}
	}
}

// readCore reads member name of the resource core into c, reporting
// false for a name outside it.
func readCore(r *ijson.Reader, name string, c core) bool {
	switch name {
	case "apiVersion":
		*c.apiVersion = r.String()
	case "kind":
		*c.kind = r.String()
	case "form":
		r.Object()
		for name, ok := r.Member(); ok; name, ok = r.Member() {
			switch name {
			case "formRef":
				readFormRef(r, &c.form.FormRef)
			case "packageDigest":
				c.form.PackageDigest = r.String()
			default:
				r.Fail()
			}
		}
	case "metadata":
		readStrings(r, []string{"name", "space", "uid", "generation", "revision"}, []*string{&c.metadata.Name, &c.metadata.Space, &c.metadata.UID, &c.metadata.Generation, &c.metadata.Revision})
	case "spec":
		*c.spec = r.Raw()
	default:
		return false
	}
	return true
}

func readFormRef(r *ijson.Reader, ref *form.FormRef) {
	readStrings(r, []string{"apiVersion", "kind", "definitionVersion", "schemaDigest"}, []*string{&ref.APIVersion, &ref.Kind, &ref.DefinitionVersion, &ref.SchemaDigest})
}

// readStrings reads an object whose members are all strings, each into
// to[i] for its name names[i]; another name fails.
func readStrings(r *ijson.Reader, names []string, to []*string) {
	r.Object()
	for name, ok := r.Member(); ok; name, ok = r.Member() {
		i := slices.Index(names, name)
		if i < 0 {
			r.Fail()
			return
		}
		*to[i] = r.String()
	}
}
