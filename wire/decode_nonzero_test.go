package wire

import (
	"reflect"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/takoform/takoform/ijson"
)

// ijson.Unmarshal into a Resource that already holds values merges as the
// library does (the hand decoder, which replaces, reads only into a zero
// value).
func TestUnmarshalIntoNonZeroResource(t *testing.T) {
	in := []byte(`{"apiVersion":"a/v1","kind":"K","form":{"formRef":{"apiVersion":"a/v1","kind":"K","definitionVersion":"1.0.0","schemaDigest":"sha256:0"}},"metadata":{"name":"n","space":"s"},"spec":{}}`)
	prev := Resource{Metadata: Metadata{UID: "old-uid", Generation: "7"}, Status: Status{ObservedGeneration: "7"}}
	got, want := prev, prev
	if err := ijson.Unmarshal(in, &got); err != nil {
		t.Fatal(err)
	}
	if err := jsonv2.Unmarshal(in, &want, jsonv2.RejectUnknownMembers(true)); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("into a Resource holding values:\n ijson.Unmarshal %+v\n library         %+v", got, want)
	}
	var fresh Resource
	if err := ijson.Unmarshal(in, &fresh); err != nil || fresh.Metadata.Name != "n" || fresh.Metadata.UID != "" {
		t.Errorf("into a zero Resource: %+v, %v", fresh.Metadata, err)
	}
}
