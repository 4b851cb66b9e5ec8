package edge

//go:generate go run ./internal/gen
