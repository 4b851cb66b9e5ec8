package store

import "time"

// Secrets is the part of Tx holding sealed sensitive-variable values
// (spec/runtime-v1.md §3.2): one row per (ModuleWorker UID, name), its
// value sealed by the host's secrets key before it reaches the store
// (host/runtime/secrets), so the store never holds a plaintext value.
// Deleting the worker's resource (DeleteResource) deletes its secrets in
// the same transaction: a worker deleted and created again under the same
// name is a new UID and inherits none.
type Secrets interface {
	// SecretPut stores s, replacing any row at its (Worker, Name).
	SecretPut(s *Secret) error
	// SecretDelete deletes the row at (worker, name) and reports whether
	// there was one.
	SecretDelete(worker, name string) (bool, error)
	// SecretsOf lists worker's rows by name (none: an empty slice).
	SecretsOf(worker string) ([]*Secret, error)
	// SecretsAfter lists up to limit rows of every worker ordered by
	// (Worker, Name), strictly after (worker, name) ("", "" starts at the
	// first): what a key rotation walks.
	SecretsAfter(worker, name string, limit int) ([]*Secret, error)
}

// Secret is one stored sensitive value, sealed. Sealed is the AEAD
// nonce and ciphertext; KeyID names the key that sealed it; UpdatedAt is
// kept to the millisecond.
type Secret struct {
	Tenant    string // the worker's tenant
	Space     string // the worker's space
	Worker    string // the ModuleWorker UID
	Name      string // the env name (forms/edge SensitiveVarName)
	Sealed    []byte
	KeyID     string
	UpdatedAt time.Time
}
