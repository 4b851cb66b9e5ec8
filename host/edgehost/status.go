package edgehost

import (
	"encoding/json"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

func statusOf(r *store.Resource) wire.Status {
	var st wire.Status
	_ = json.Unmarshal(r.Status, &st)
	return st
}
