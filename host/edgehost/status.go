package edgehost

import (
	"encoding/json"
	"fmt"

	"github.com/takoform/takoform/host/store"
	"github.com/takoform/takoform/wire"
)

// statusOf decodes a stored status; none yet is the zero Status.
func statusOf(r *store.Resource) (wire.Status, error) {
	var st wire.Status
	if len(r.Status) == 0 {
		return st, nil
	}
	if err := json.Unmarshal(r.Status, &st); err != nil {
		return st, fmt.Errorf("stored status of %s %q: %w", r.Kind, r.Name, err)
	}
	return st, nil
}
