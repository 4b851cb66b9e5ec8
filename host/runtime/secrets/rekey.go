package secrets

import (
	"context"
	"errors"

	"github.com/takoform/takoform/host/store"
)

// RekeyResult is what Rekey did: values resealed with the current key,
// values already under it, and values neither key opens (they must be
// set again; their rows are left as they are).
type RekeyResult struct {
	Resealed, Current, Unopened int
}

// rekeyPage is how many rows one Rekey transaction handles.
const rekeyPage = 100

// Rekey reseals every stored value not sealed by k's current key (a key
// rotation, handbook/secrets.md): each is opened (with the previous key)
// and sealed again under the same address with its update time kept, a
// page of rows per transaction, so hosts serving meanwhile always read
// values that open with the current or the previous key.
func Rekey(ctx context.Context, st store.Store, k *Keyring) (RekeyResult, error) {
	var r RekeyResult
	worker, name := "", ""
	for {
		var n int
		var page RekeyResult
		err := st.Update(ctx, func(tx store.Tx) error {
			page = RekeyResult{}
			rows, err := tx.SecretsAfter(worker, name, rekeyPage)
			if err != nil {
				return err
			}
			n = len(rows)
			for _, row := range rows {
				if row.KeyID == k.Current() {
					page.Current++
					continue
				}
				v, err := k.Open(row)
				if errors.Is(err, ErrUndecryptable) {
					page.Unopened++
					continue
				}
				if err != nil {
					return err
				}
				err = k.Seal(row, v)
				clear(v)
				if err != nil {
					return err
				}
				if err := tx.SecretPut(row); err != nil {
					return err
				}
				page.Resealed++
			}
			if n > 0 {
				worker, name = rows[n-1].Worker, rows[n-1].Name
			}
			return nil
		})
		if err != nil {
			return r, err
		}
		r.Resealed, r.Current, r.Unopened = r.Resealed+page.Resealed, r.Current+page.Current, r.Unopened+page.Unopened
		if n < rekeyPage {
			return r, nil
		}
	}
}
