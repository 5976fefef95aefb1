// Package check holds the test that the Kubernetes manifests in
// deploy/kubernetes are what the API server would accept: every document
// decodes strictly (an unknown or misspelt field fails) into the k8s.io/api
// type of its kind, and the pods get what the waitroom configuration they
// run asks for. It is a module of its own so that the main module never
// depends on k8s.io/api; `make test` runs it.
package check
