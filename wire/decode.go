package wire

import (
	"encoding/json"

	"github.com/takoform/takoform/form"
	"github.com/takoform/takoform/ijson"
)

// The hand-written decoders of the bodies every create carries both ways
// (ijson.FastDecoder): ijson.UnmarshalChecked tries them before the
// library, which reads whatever they decline — an escaped string, a null,
// a member of another type or name — and alone words every refusal.
// decode_test.go compares them with the library on a table and a fuzz
// target.

// ReadIJSON decodes a ResourceRequest (ijson.FastDecoder).
func (v *ResourceRequest) ReadIJSON(data []byte) bool {
	r := ijson.NewReader(data)
	var out ResourceRequest
	r.Object()
	for name, ok := r.Member(); ok; name, ok = r.Member() {
		if !readCore(r, name, &out.APIVersion, &out.Kind, &out.Form, &out.Metadata, &out.Spec) {
			r.Fail()
		}
	}
	if !r.OK() {
		return false
	}
	*v = out
	return true
}

// ReadIJSON decodes an ApplyRequest (ijson.FastDecoder).
func (v *ApplyRequest) ReadIJSON(data []byte) bool {
	r := ijson.NewReader(data)
	var out ApplyRequest
	r.Object()
	for name, ok := r.Member(); ok; name, ok = r.Member() {
		if readCore(r, name, &out.APIVersion, &out.Kind, &out.Form, &out.Metadata, &out.Spec) {
			continue
		}
		switch name {
		case "review":
			r.Object()
			for name, ok := r.Member(); ok; name, ok = r.Member() {
				if name != "prepareDigest" {
					r.Fail()
				}
				out.Review.PrepareDigest = r.String()
			}
		case "expectedUid":
			out.ExpectedUID = r.String()
		case "expectedGeneration":
			out.ExpectedGeneration = r.String()
		default:
			r.Fail()
		}
	}
	if !r.OK() {
		return false
	}
	*v = out
	return true
}

// ReadIJSON decodes a PrepareResponse (ijson.FastDecoder).
func (v *PrepareResponse) ReadIJSON(data []byte) bool {
	r := ijson.NewReader(data)
	var out PrepareResponse
	r.Object()
	for name, ok := r.Member(); ok; name, ok = r.Member() {
		switch name {
		case "resource":
			res := &out.Resource
			r.Object()
			for name, ok := r.Member(); ok; name, ok = r.Member() {
				if !readCore(r, name, &res.APIVersion, &res.Kind, &res.Form, &res.Metadata, &res.Spec) {
					r.Fail()
				}
			}
		case "review":
			r.Object()
			for name, ok := r.Member(); ok; name, ok = r.Member() {
				switch name {
				case "prepareDigest":
					out.Review.PrepareDigest = r.String()
				case "specDigest":
					out.Review.SpecDigest = r.String()
				default:
					r.Fail()
				}
			}
		default:
			r.Fail()
		}
	}
	if !r.OK() {
		return false
	}
	*v = out
	return true
}

// ReadIJSON decodes a Resource (ijson.FastDecoder).
func (v *Resource) ReadIJSON(data []byte) bool {
	r := ijson.NewReader(data)
	var out Resource
	r.Object()
	for name, ok := r.Member(); ok; name, ok = r.Member() {
		if readCore(r, name, &out.APIVersion, &out.Kind, &out.Form, &out.Metadata, &out.Spec) {
			continue
		}
		if name != "status" {
			r.Fail()
			break
		}
		readStatus(r, &out.Status)
	}
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
				r.Object()
				for name, ok := r.Member(); ok; name, ok = r.Member() {
					switch name {
					case "type":
						c.Type = r.String()
					case "status":
						c.Status = r.String()
					case "reason":
						c.Reason = r.String()
					case "lastTransitionTime":
						c.LastTransitionTime = r.String()
					case "hostReason":
						c.HostReason = r.String()
					case "message":
						c.Message = r.String()
					default:
						r.Fail()
					}
				}
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

// readCore reads member name of the resource core every request and
// answer shares, reporting false for a name outside it.
func readCore(r *ijson.Reader, name string, apiVersion, kind *string, fr *FormReference, md *Metadata, spec *json.RawMessage) bool {
	switch name {
	case "apiVersion":
		*apiVersion = r.String()
	case "kind":
		*kind = r.String()
	case "form":
		r.Object()
		for name, ok := r.Member(); ok; name, ok = r.Member() {
			switch name {
			case "formRef":
				readFormRef(r, &fr.FormRef)
			case "packageDigest":
				fr.PackageDigest = r.String()
			default:
				r.Fail()
			}
		}
	case "metadata":
		r.Object()
		for name, ok := r.Member(); ok; name, ok = r.Member() {
			switch name {
			case "name":
				md.Name = r.String()
			case "space":
				md.Space = r.String()
			case "uid":
				md.UID = r.String()
			case "generation":
				md.Generation = r.String()
			case "revision":
				md.Revision = r.String()
			default:
				r.Fail()
			}
		}
	case "spec":
		*spec = r.Raw()
	default:
		return false
	}
	return true
}

func readFormRef(r *ijson.Reader, ref *form.FormRef) {
	r.Object()
	for name, ok := r.Member(); ok; name, ok = r.Member() {
		switch name {
		case "apiVersion":
			ref.APIVersion = r.String()
		case "kind":
			ref.Kind = r.String()
		case "definitionVersion":
			ref.DefinitionVersion = r.String()
		case "schemaDigest":
			ref.SchemaDigest = r.String()
		default:
			r.Fail()
		}
	}
}
