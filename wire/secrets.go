package wire

// SecretsBase is the path of the host's sensitive-variable route, outside
// the lane's API base and absent from discovery (spec/runtime-v1.md
// §3.2). Below it:
//
//	GET    SecretsBase/workers/{group}/{version}/{worker}?space=S               → SecretList
//	PUT    SecretsBase/workers/{group}/{version}/{worker}/secrets/{name}?space=S ← SecretValue → SecretInfo
//	DELETE SecretsBase/workers/{group}/{version}/{worker}/secrets/{name}?space=S → SecretInfo
//
// authenticated as the Host API is (a bearer token names the tenant),
// refusing with the error envelope and codes of Taxonomy.
const SecretsBase = "/takoform/secrets/v1"

// SecretValue is the body of a secret PUT: the value, a string of 1 to
// MaxSecretBytes bytes of UTF-8 without NUL.
type SecretValue struct {
	Value string `json:"value"`
}

// MaxSecretBytes is the largest sensitive value a host keeps, in bytes.
const MaxSecretBytes = 5 << 10

// SecretWorker names the worker a secret answer is about: its space,
// Form group (apiVersion), name and UID.
type SecretWorker struct {
	Space string `json:"space"`
	Group string `json:"group"`
	Name  string `json:"name"`
	UID   string `json:"uid"`
}

// SecretInfo is what a host says about one sensitive variable of a
// worker, never its value: whether a value is set, when it was last set
// (RFC 3339, UTC, milliseconds; empty when unset) and which of the
// worker's versions declare the name in requiredSensitiveVars.
type SecretInfo struct {
	Name       string   `json:"name"`
	Set        bool     `json:"set"`
	UpdatedAt  string   `json:"updatedAt,omitempty"`
	RequiredBy []string `json:"requiredBy,omitempty"`
}

// SecretList is a worker's sensitive variables by name: every name with
// a value and every name one of its versions requires.
type SecretList struct {
	Worker  SecretWorker `json:"worker"`
	Secrets []SecretInfo `json:"secrets"`
}
